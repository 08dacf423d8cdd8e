//! The tables one engine leaves for the next on the same thread, to reuse their
//! allocations.

use crate::engine::Dpor;
use crate::hb::Hb;
use crate::pos::Pos;
use crate::races::Memo;
use crate::replay::{Cursor, Snapshot};
use crate::{exact, wut};
use fencer_machine::{Access, Event, State, Status, Step};
use fencer_memory::MemoryModel;

/// An emptied vector, with its allocation.
fn emptied<T>(mut v: Vec<T>) -> Vec<T> {
    v.clear();
    v
}

/// The tables an engine leaves for the next one on the same thread: an exact split's
/// worker explores unit after unit, and building each unit's tables afresh (positions,
/// events, clocks, machine snapshots) went through the allocator's slow paths, 7% of the
/// Treiber stack's units' time. Only allocations pass; what they hold is cleared or, for
/// the clocks, reset by the first execution.
#[derive(Default)]
pub(crate) struct Kit {
    hb: Option<Hb>,
    pos: Vec<Pos>,
    vacant: Vec<bool>,
    schedule: Vec<Step>,
    events: Vec<Event>,
    accs: Vec<Access>,
    enabled: Vec<Step>,
    pending: Vec<(usize, usize)>,
    settled: Vec<((usize, usize), Memo)>,
    snaps: Vec<Snapshot>,
    scratch: Option<State>,
    spare: Option<State>,
    last: Option<State>,
    initial: Option<(State, Status)>,
    cursor: Cursor,
    rec_scratch: Box<exact::Scratch>,
    wut_spare: wut::Spare,
}

impl<'a, M: MemoryModel> Dpor<'a, M> {
    /// Takes over the tables a finished engine left in `kit` (see [`Kit`]).
    pub(crate) fn use_kit(&mut self, kit: Kit) {
        let Kit {
            hb,
            pos,
            vacant,
            schedule,
            events,
            accs,
            enabled,
            pending,
            settled,
            snaps,
            scratch,
            spare,
            last,
            initial,
            cursor,
            rec_scratch,
            wut_spare,
        } = kit;
        self.last = last;
        self.initial = initial;
        // Reset by the first execution, which starts from the initial state.
        if let Some(hb) = hb {
            self.hb = hb;
        }
        self.pos = emptied(pos);
        self.vacant = emptied(vacant);
        self.schedule = emptied(schedule);
        self.events = emptied(events);
        self.accs = emptied(accs);
        self.enabled = emptied(enabled);
        self.pending = emptied(pending);
        self.settled = emptied(settled);
        // Every snapshot is spent: they are of another unit's executions.
        self.snap_pool = snaps;
        *self.scratch.get_mut() = scratch;
        *self.spare.get_mut() = spare;
        *self.cursor.get_mut() = Cursor { at: None, ..cursor };
        self.rec_scratch = rec_scratch;
        self.wut_spare = wut_spare;
    }

    /// Leaves this engine's tables for the next one on the thread.
    pub(crate) fn take_kit(&mut self) -> Kit {
        let mut snaps = std::mem::take(&mut self.snap_pool);
        snaps.append(&mut self.snaps);
        Kit {
            hb: Some(std::mem::take(&mut self.hb)),
            pos: std::mem::take(&mut self.pos),
            vacant: std::mem::take(&mut self.vacant),
            schedule: std::mem::take(&mut self.schedule),
            events: std::mem::take(&mut self.events),
            accs: std::mem::take(&mut self.accs),
            enabled: std::mem::take(&mut self.enabled),
            pending: std::mem::take(&mut self.pending),
            settled: std::mem::take(&mut self.settled),
            snaps,
            scratch: self.scratch.get_mut().take(),
            spare: self.spare.get_mut().take(),
            last: self.last.take(),
            initial: self.initial.take(),
            cursor: std::mem::take(self.cursor.get_mut()),
            rec_scratch: std::mem::take(&mut self.rec_scratch),
            wut_spare: std::mem::take(&mut self.wut_spare),
        }
    }
}
