//! Rendering events as counterexample trace lines.

use crate::{Event, EventKind, ReadFrom, State, Step};
use fencer_ir::Program;
use fencer_memory::{Chan, Loc};
use fencer_report::TraceLine;

impl State {
    /// Renders an event for a counterexample.
    pub fn describe(&self, prog: &Program, e: &Event, step_no: usize) -> TraceLine {
        let name = |l: Loc| loc_name(prog, l);
        let (thread, buffer_update) = match e.step {
            Step::Thread(t) => (self.thread_name(prog, t), false),
            Step::Update(t, Chan::Thread) => (format!("upd({})", self.thread_name(prog, t)), true),
            Step::Update(t, Chan::Loc(l)) => (
                format!("upd({},{})", self.thread_name(prog, t), name(l)),
                true,
            ),
        };
        let from = |f: &ReadFrom| match f {
            ReadFrom::Init => "initial value".to_string(),
            ReadFrom::Store(id) => format!("{}'s store", self.thread_name(prog, id.thread)),
        };
        let (op, location, value) = match &e.kind {
            EventKind::Load {
                loc,
                value,
                from: f,
                forwarded,
            } => (
                format!(
                    "load {} -> {}{}",
                    name(*loc),
                    value,
                    if *forwarded {
                        " (from own store buffer)".to_string()
                    } else {
                        format!(" ({})", from(f))
                    }
                ),
                Some(name(*loc)),
                Some(*value),
            ),
            EventKind::Store {
                loc,
                value,
                buffered,
            } => (
                format!(
                    "store {} = {}{}",
                    name(*loc),
                    value,
                    if *buffered { " (to store buffer)" } else { "" }
                ),
                Some(name(*loc)),
                Some(*value),
            ),
            EventKind::Update { loc, value, .. } => (
                format!("update {} = {} (store buffer -> memory)", name(*loc), value),
                Some(name(*loc)),
                Some(*value),
            ),
            EventKind::Rmw {
                loc, read, written, ..
            } => (
                match written {
                    Some(w) => format!("atomic {} : {} -> {}", name(*loc), read, w),
                    None => format!(
                        "atomic {} : read {} (compare failed, no write)",
                        name(*loc),
                        read
                    ),
                },
                Some(name(*loc)),
                Some(written.unwrap_or(*read)),
            ),
            EventKind::Fence(k) => (k.name().into(), None, None),
            EventKind::Lock {
                loc,
                trylock,
                destroy,
                ..
            } => (
                format!(
                    "{} {}",
                    if *destroy {
                        "destroy"
                    } else if *trylock {
                        "trylock"
                    } else {
                        "lock"
                    },
                    name(*loc)
                ),
                Some(name(*loc)),
                None,
            ),
            EventKind::TryLockFailed { loc, .. } => (
                format!("trylock {} (held: not taken)", name(*loc)),
                Some(name(*loc)),
                None,
            ),
            EventKind::Unlock { loc, .. } => {
                (format!("unlock {}", name(*loc)), Some(name(*loc)), None)
            }
            EventKind::Spawn { child } => (
                format!("spawn {}", self.thread_name(prog, *child)),
                None,
                Some(*child as i64),
            ),
            EventKind::Join { child } => (
                format!("join {}", self.thread_name(prog, *child)),
                None,
                None,
            ),
            EventKind::BarrierArrive {
                loc,
                gen,
                arrived,
                count,
                ..
            } => (
                format!(
                    "barrier_wait {}: arrives {arrived} of {count}{} (generation {gen})",
                    name(*loc),
                    if arrived == count {
                        ", the last: releases the others"
                    } else {
                        ""
                    }
                ),
                Some(name(*loc)),
                None,
            ),
            EventKind::BarrierPass { loc } => (
                format!("barrier_wait {}: passes", name(*loc)),
                Some(name(*loc)),
                None,
            ),
            EventKind::Alloc { size, .. } => (format!("alloc {size} cells"), None, None),
            EventKind::Free { .. } => ("free".into(), None, None),
            EventKind::Assume => ("assume (holds)".into(), None, None),
            EventKind::Failed | EventKind::FaultedAccess { .. } | EventKind::FailedJoin { .. } => {
                ("fails".into(), None, None)
            }
        };
        TraceLine {
            step: step_no,
            function: prog
                .source_trace
                .then(|| prog.functions[e.func as usize].name.clone()),
            thread,
            file: prog.file_name(e.src).to_string(),
            line: e.src.line,
            column: e.src.col,
            op,
            location,
            value,
            buffer_update,
        }
    }
}

/// `x`, `a[3]`, or `heap#5[0]` for a cell.
pub fn loc_name(prog: &Program, l: Loc) -> String {
    if (l.obj as usize) < prog.objects.len() {
        prog.cell_name(l.obj, l.index)
    } else {
        format!("heap#{}[{}]", l.obj, l.index)
    }
}
