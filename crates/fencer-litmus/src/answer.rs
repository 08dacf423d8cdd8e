//! herd7's answer to a litmus test, computed from an engine's report.

use crate::Litmus;
use fencer_ir::CondVar;
use fencer_report::Report;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write;

#[derive(Clone, Debug, Serialize)]
pub struct Answer {
    pub test: String,
    pub model: String,
    /// `Allowed` (exists), `Forbidden` (~exists) or `Required` (forall): what the test asks.
    pub kind: &'static str,
    /// herd7's names of the variables each state lists.
    pub vars: Vec<String>,
    /// Every reachable final state (after the filter), projected on `vars`, sorted.
    pub states: Vec<Vec<i64>>,
    /// Whether the condition is validated: `Ok` or `No`.
    pub ok: bool,
    /// Executions (one per trace) whose final state satisfies / does not satisfy the
    /// proposition.
    pub positive: u64,
    pub negative: u64,
    pub condition: String,
    /// `Always`, `Sometimes` or `Never`.
    pub observation: &'static str,
    pub executions: u64,
    pub elapsed_ms: u64,
    /// Set when a limit stopped the exploration: the answer is then partial.
    pub incomplete: bool,
    /// Flags consistent executions raised, as herd7 names them (`*undef*` first, for an
    /// execution a model's `undefined_unless` check calls undefined).
    pub flags: Vec<String>,
    /// A loop ran past its unrolling bound in some execution, which was left out: the
    /// answer holds up to the bound (herd7 prints `Loop` before the result).
    pub loop_cut: bool,
}

/// herd7's name for the flag of an undefined execution.
pub const UNDEF: &str = "*undef*";

impl Litmus {
    /// The answer, from a report of a run that explored every execution (`--all`).
    pub fn answer(&self, r: &Report) -> Answer {
        let reported = self.program.reported_vars();
        let index = |v: &CondVar| reported.iter().position(|x| x == v).expect("reported");
        let cols: Vec<usize> = self.vars.iter().map(index).collect();
        let mut states = BTreeSet::new();
        let (mut positive, mut negative) = (0, 0);
        let fs = r.final_states.clone().unwrap_or_default();
        let counts = r.final_state_executions.clone().unwrap_or_default();
        for (k, st) in fs.iter().enumerate() {
            let lookup = |v: &CondVar| st[index(v)];
            if let Some(f) = &self.filter {
                if f.eval(&lookup) == 0 {
                    continue;
                }
            }
            states.insert(cols.iter().map(|&c| st[c]).collect::<Vec<_>>());
            let n = counts.get(k).copied().unwrap_or(1);
            if self.prop.eval(&lookup) != 0 {
                positive += n;
            } else {
                negative += n;
            }
        }
        Answer::tally(
            &self.test.name,
            &r.model,
            self.test.quant,
            self.vars.iter().map(|v| self.var_name(v)).collect(),
            Tally {
                states,
                positive,
                negative,
                flags: BTreeSet::new(),
            },
            self.program
                .cond
                .as_ref()
                .map(|c| c.text.clone())
                .unwrap_or_default(),
            r.executions,
            r.elapsed_ms,
            r.stopped_by.is_some(),
        )
    }
}

/// What an answer counts: final states (after the filter), executions whose final state
/// satisfies the proposition or not, and flags raised.
#[derive(Default)]
pub(crate) struct Tally {
    pub states: BTreeSet<Vec<i64>>,
    pub positive: u64,
    pub negative: u64,
    pub flags: BTreeSet<String>,
}

impl Answer {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn tally(
        test: &str,
        model: &str,
        quant: crate::Quant,
        vars: Vec<String>,
        t: Tally,
        condition: String,
        executions: u64,
        elapsed_ms: u64,
        incomplete: bool,
    ) -> Answer {
        let (positive, negative) = (t.positive, t.negative);
        let (kind, ok) = match quant {
            crate::Quant::Exists => ("Allowed", positive > 0),
            crate::Quant::NotExists => ("Forbidden", positive == 0),
            crate::Quant::Forall => ("Required", negative == 0),
        };
        let observation = if positive == 0 {
            "Never"
        } else if negative == 0 {
            "Always"
        } else {
            "Sometimes"
        };
        // `*undef*` first, then the others by name, as herd7 orders them.
        let mut flags: Vec<String> = t.flags.into_iter().collect();
        flags.sort_by_key(|f| (f != UNDEF, f.clone()));
        Answer {
            test: test.to_string(),
            model: model.to_string(),
            kind,
            vars,
            states: t.states.into_iter().collect(),
            ok,
            positive,
            negative,
            condition,
            observation,
            executions,
            elapsed_ms,
            incomplete,
            flags,
            loop_cut: false,
        }
    }

    /// herd7's layout, line for line (without its `Hash=` line).
    pub fn to_herd(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "Test {} {}", self.test, self.kind);
        let _ = writeln!(s, "States {}", self.states.len());
        for st in &self.states {
            let line: Vec<String> = self
                .vars
                .iter()
                .zip(st)
                .map(|(v, x)| format!("{v}={x};"))
                .collect();
            let _ = writeln!(s, "{}", line.join(" "));
        }
        let result = if self.flags.iter().any(|f| f == UNDEF) {
            "Undef"
        } else if self.ok {
            "Ok"
        } else {
            "No"
        };
        let _ = writeln!(s, "{}{result}", if self.loop_cut { "Loop " } else { "" });
        let _ = writeln!(s, "Witnesses");
        // herd7 counts witnesses of the condition: for `~exists`, the executions that
        // do not satisfy the proposition are the positive ones.
        let (pos, neg) = if self.kind == "Forbidden" {
            (self.negative, self.positive)
        } else {
            (self.positive, self.negative)
        };
        let _ = writeln!(s, "Positive: {pos} Negative: {neg}");
        for f in &self.flags {
            let _ = writeln!(s, "Flag {f}");
        }
        let _ = writeln!(s, "Condition {}", self.condition);
        let _ = writeln!(
            s,
            "Observation {} {} {} {}",
            self.test, self.observation, self.positive, self.negative
        );
        if self.incomplete {
            let _ = writeln!(
                s,
                "(incomplete: a limit stopped the exploration; the answer is partial)"
            );
        }
        s
    }
}
