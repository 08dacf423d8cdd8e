//! Input values for the engines that enumerate them ([`Op::Nondet`]).
//!
//! An input is named by its *slot*: the thread that reads it and how many inputs that
//! thread read before. A run of an engine gets an [`InputPlan`]: the representative values
//! of every input site (the IR's analysis, `fencer_ir::inputs`), and an assignment of
//! values to some slots; every other slot takes its site's first value, the *default*.
//! The program with inputs fixed that way is deterministic in its inputs, so an engine
//! explores it as it explores any program. fencer-dpor's `inputs.rs` enumerates the
//! assignments from the slots the runs read (each read is noted in the plan), and counts
//! an execution only in the run whose assignment is exactly the execution's reads of
//! values other than the default ([`Choice::own`]), so every execution with its input
//! values is counted once.
//!
//! The reference explorer instead branches where an input is read: its plan *asks*, a read
//! with no value queued stops the step and names the site ([`Choice::need`]), and the
//! explorer tries the step again once for each value.
//!
//! [`Op::Nondet`]: fencer_ir::Op::Nondet

use fencer_ir::{FuncId, SrcLoc, Value};
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

/// One input site: an `Op::Nondet` at `pc` of `func`.
#[derive(Clone, Debug)]
pub struct PlanSite {
    pub func: FuncId,
    pub pc: u32,
    pub loc: SrcLoc,
    pub bits: u8,
    /// The values to try, the default first; `None` when there are too many, with the
    /// message a read of it faults with.
    pub values: Result<Vec<Value>, String>,
}

/// The inputs of one run: the sites, the assigned slots, and the slots the run read.
#[derive(Debug)]
pub struct InputPlan {
    /// By `(func, pc)`.
    sites: Vec<PlanSite>,
    assigned: HashMap<(u32, u32), Value>,
    /// Read with no queued value: stop and name the site (the reference's branching).
    ask: bool,
    /// Every `(thread, index, site)` some execution of the run read, for the enumeration
    /// to branch on. Shared by the workers of a split, and written once per read, which
    /// is rare next to events.
    seen: Mutex<HashSet<(u32, u32, u32)>>,
}

impl InputPlan {
    pub fn new(mut sites: Vec<PlanSite>, assigned: HashMap<(u32, u32), Value>) -> InputPlan {
        sites.sort_by_key(|s| (s.func, s.pc));
        InputPlan {
            sites,
            assigned,
            ask: false,
            seen: Mutex::new(HashSet::new()),
        }
    }

    /// A plan that gives no value itself: every read takes the thread's next queued value
    /// ([`crate::State::inputs`]), and without one stops its step and names its site.
    pub fn asking(sites: Vec<PlanSite>) -> InputPlan {
        InputPlan {
            ask: true,
            ..InputPlan::new(sites, HashMap::new())
        }
    }

    pub fn sites(&self) -> &[PlanSite] {
        &self.sites
    }

    pub fn assigned(&self) -> &HashMap<(u32, u32), Value> {
        &self.assigned
    }

    /// The slots read so far, with the site that read each.
    pub fn seen(&self) -> Vec<(u32, u32, u32)> {
        let mut v: Vec<_> = self
            .seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .copied()
            .collect();
        v.sort_unstable();
        v
    }

    fn site(&self, func: FuncId, pc: u32) -> Option<u32> {
        self.sites
            .binary_search_by_key(&(func, pc), |s| (s.func, s.pc))
            .ok()
            .map(|i| i as u32)
    }
}

/// A plan as a state holds it: equal to any other and hashed as nothing, since every state
/// of a run has the same one (the reads it gave are in the log).
#[derive(Clone, Debug, Default)]
pub struct PlanRef(pub Option<Arc<InputPlan>>);

impl PartialEq for PlanRef {
    fn eq(&self, _: &PlanRef) -> bool {
        true
    }
}
impl Eq for PlanRef {}
impl Hash for PlanRef {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

/// One input read: thread, its index among the thread's reads, the site, the value, and
/// the thread's visible events before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InputRead {
    pub thread: u32,
    pub index: u32,
    pub site: u32,
    pub value: Value,
    pub event: u32,
}

/// What a state knows of inputs: the plan and what was read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Choice {
    pub plan: PlanRef,
    pub log: Vec<InputRead>,
    /// Reads that took a value other than their site's default.
    pub nondefault: u32,
    /// The thread and site of the first read of an asking plan that stopped for want of a
    /// value (a state's first threads start in one go, and each may stop so).
    pub need: Option<(u32, u32)>,
}

impl Choice {
    /// Whether this execution (or its prefix) belongs to its run: it read a value other
    /// than the default at every assigned slot, and so at nothing else. Always without a
    /// plan.
    pub fn own(&self) -> bool {
        match &self.plan.0 {
            Some(p) => p.ask || self.nondefault as usize == p.assigned.len(),
            None => true,
        }
    }

    /// The value of thread `t`'s next input, read by the `Op::Nondet` at `pc` of `func`
    /// after `events` visible events of the thread; `queued` is the thread's next queued
    /// value. `Err` is the message of the fault a read without a value is.
    pub(crate) fn read(
        &mut self,
        t: u32,
        func: FuncId,
        pc: u32,
        events: u32,
        queued: Option<Value>,
    ) -> Result<Value, String> {
        let Some(plan) = &self.plan.0 else {
            return queued.ok_or_else(|| {
                "nondeterministic input: this engine does not choose input values (use \
                 --engine abpress)"
                    .to_string()
            });
        };
        let Some(site) = plan.site(func, pc) else {
            return Err("an input the analysis did not see (a bug in fencer)".into());
        };
        let index = self.log.iter().filter(|r| r.thread == t).count() as u32;
        let s = &plan.sites[site as usize];
        let value = match queued {
            Some(v) => v,
            None if plan.ask => {
                self.need.get_or_insert((t, site));
                return Err("an input needs a value".into());
            }
            None => {
                let values = s.values.as_ref().map_err(Clone::clone)?;
                plan.seen
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert((t, index, site));
                let default = values[0];
                match plan.assigned.get(&(t, index)) {
                    Some(&a) => {
                        // The slot's value came from the site that read it in an earlier
                        // run; another site may read it here. The execution is this run's
                        // only if the value is one of this site's, as it is: else it is
                        // the run's that assigns what this site makes of it, or no run's
                        // (a value no representative stands for).
                        let v = canonical(a, s.bits);
                        if v == a && v != default && values.contains(&v) {
                            self.nondefault += 1;
                        }
                        v
                    }
                    None => default,
                }
            }
        };
        self.log.push(InputRead {
            thread: t,
            index,
            site,
            value,
            event: events,
        });
        Ok(value)
    }

    /// Every value of the sites thread `t` read, in order, each once (at most
    /// [`MAX_HANG_TRIES`]): the values a waiting loop that reads inputs is tried with.
    pub fn values_read_by(&self, t: u32) -> Vec<Value> {
        let Some(plan) = &self.plan.0 else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for r in self.log.iter().filter(|r| r.thread == t) {
            if let Ok(vals) = &plan.sites[r.site as usize].values {
                for &v in vals {
                    if !out.contains(&v) && out.len() < MAX_HANG_TRIES {
                        out.push(v);
                    }
                }
            }
        }
        out
    }

    /// A 128-bit fingerprint of the values read, to add to a trace's: two executions with
    /// the same events but other inputs are other executions.
    pub fn fingerprint(&self) -> u128 {
        if self.log.is_empty() {
            return 0;
        }
        let mut reads: Vec<(u32, u32, Value)> = self
            .log
            .iter()
            .map(|r| (r.thread, r.index, r.value))
            .collect();
        reads.sort_unstable();
        let mut a = std::collections::hash_map::DefaultHasher::new();
        (0x17u8, &reads).hash(&mut a);
        let mut b = std::collections::hash_map::DefaultHasher::new();
        (0x71u8, &reads).hash(&mut b);
        ((a.finish() as u128) << 64) | b.finish() as u128
    }
}

/// `v` as an input of `bits` holds it (sign-extended; one bit is 0 or 1).
pub fn canonical(v: Value, bits: u8) -> Value {
    match bits {
        1 => v & 1,
        b if b >= 64 => v,
        b => fencer_ir::UnOp::Sext(b).eval(v),
    }
}

/// Most values a waiting loop that reads inputs is tried with to judge a hang.
pub const MAX_HANG_TRIES: usize = 32;

/// Most values an input may have for the engines to try each (`--input-values`).
pub const DEFAULT_LIMIT: u64 = 256;

/// The program's input sites, with the values to try at each (`fencer_ir::inputs`) and,
/// for an input with more than `limit`, the message a read of it faults with.
pub fn plan_sites(prog: &fencer_ir::Program, limit: u64) -> Vec<PlanSite> {
    use fencer_ir::inputs::Domain;
    fencer_ir::inputs::input_sites(prog, limit)
        .into_iter()
        .map(|s| PlanSite {
            func: s.func,
            pc: s.pc,
            loc: s.loc,
            bits: s.bits,
            values: match s.domain {
                Domain::Values(v) => Ok(v),
                Domain::Wide { lo, hi, count } => {
                    Err(wide_message(prog, s.loc, lo, hi, count, limit))
                }
            },
        })
        .collect()
}

/// Why an input cannot be enumerated, and what to do about it.
pub fn wide_message(
    prog: &fencer_ir::Program,
    loc: SrcLoc,
    lo: Value,
    hi: Value,
    count: u64,
    limit: u64,
) -> String {
    let count = if count == u64::MAX {
        "2^64".to_string()
    } else {
        count.to_string()
    };
    format!(
        "the input at {}:{}:{} can take {count} values ({lo}..={hi}), more than the {limit} \
         this engine tries one by one: narrow it right after the call, e.g. \
         `__VERIFIER_assume(0 <= x && x < 4);`, or use a narrower type (`_Bool`, `char`); \
         under SC, `--engine abpress` treats it as an unknown value",
        prog.file_name(loc),
        loc.line,
        loc.col
    )
}
