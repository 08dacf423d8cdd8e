//! Which `check` option applies to which input: every option the user gave must be one that
//! the input's front-end and the chosen engine honour, or the run is refused (exit 2) with
//! the option, the inputs it applies to, and what this run is. A verifier that answered
//! SAFE with an option ignored would answer a question nobody asked.
//!
//! Options are told given or not by clap's value source, not by their values, since
//! several have defaults (`--model`, `--engine`, `--algo`, `--max-depth`, ...). Every
//! option of `check` has a rule here; a unit test holds the list to the command's.
//! Conditions that need the model read first (DVE's `--fair` with no LTL property to
//! check, a `-D` naming no `input` constant) are checked by the DVE front-end.

use crate::{Engine, Hangs, Model, Options};
use std::collections::BTreeSet;
use std::path::Path;

/// The ids of the options given on the command line (clap's ids: the field names).
#[derive(Clone, Debug, Default)]
pub struct Given(BTreeSet<String>);

impl Given {
    /// The options of a parsed command that came from its command line.
    #[cfg(feature = "cli")]
    pub fn from_matches(m: &clap::ArgMatches) -> Given {
        use clap::parser::ValueSource;
        Given(
            m.ids()
                .filter(|id| m.value_source(id.as_str()) == Some(ValueSource::CommandLine))
                .map(|id| id.as_str().to_string())
                .collect(),
        )
    }

    pub fn has(&self, id: &str) -> bool {
        self.0.contains(id)
    }

    /// Marks the option `id` (its field name) given.
    pub fn insert(&mut self, id: &str) {
        self.0.insert(id.to_string());
    }

    /// Marks the option `id` not given (one that was honoured before the run changed
    /// engine).
    pub fn remove(&mut self, id: &str) {
        self.0.remove(id);
    }

    pub fn ids(&self) -> impl Iterator<Item = &String> {
        self.0.iter()
    }
}

/// What a file is, as far as options go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Fen,
    Litmus,
    /// C source clang preprocesses (`.c`).
    C,
    /// Preprocessed C (`.i`): compiled, not preprocessed.
    Preprocessed,
    /// LLVM IR (`.ll`, `.bc`): nothing to compile, but fencer's C library.
    Ir,
    Dve,
    Cub,
}

impl Kind {
    pub fn of(path: &Path) -> Option<Kind> {
        Some(match path.extension()?.to_str()? {
            "fen" => Kind::Fen,
            "litmus" => Kind::Litmus,
            "c" => Kind::C,
            "i" => Kind::Preprocessed,
            "ll" | "bc" => Kind::Ir,
            "dve" => Kind::Dve,
            "cub" => Kind::Cub,
            _ => return None,
        })
    }

    /// A program (every input but DVE and `.cub` models).
    pub fn is_program(self) -> bool {
        !matches!(self, Kind::Dve | Kind::Cub)
    }

    /// C source, preprocessed C or LLVM IR: what the C front-end reads.
    pub fn is_c(self) -> bool {
        matches!(self, Kind::C | Kind::Preprocessed | Kind::Ir)
    }
}

/// The run the options are held to.
struct Run<'a> {
    kind: Kind,
    args: &'a Options,
}

impl Run<'_> {
    fn program_with(&self, engines: &[&str]) -> bool {
        self.kind.is_program() && engines.contains(&engine_name(self.args.engine))
    }

    fn relaxed_dve(&self) -> bool {
        self.kind == Kind::Dve && !matches!(self.args.model, Model::Sc)
    }

    fn describe(&self) -> String {
        let file = self.args.file.display();
        match self.kind {
            Kind::Dve => format!(
                "{file} is a DVE model (explicit-state engine, --model {})",
                model_name(self.args.model)
            ),
            Kind::Cub => format!("{file} is a .cub model (parameterized engine)"),
            Kind::Fen | Kind::Litmus => format!(
                "{file} is a program checked by --engine {}",
                engine_name(self.args.engine)
            ),
            Kind::C => format!(
                "{file} is C source checked by --engine {}",
                engine_name(self.args.engine)
            ),
            Kind::Preprocessed => format!(
                "{file} is preprocessed C (clang compiles it without preprocessing), checked by --engine {}",
                engine_name(self.args.engine)
            ),
            Kind::Ir => format!(
                "{file} is LLVM IR (nothing is compiled), checked by --engine {}",
                engine_name(self.args.engine)
            ),
        }
    }
}

fn engine_name(e: Engine) -> &'static str {
    match e {
        // The options of `auto` are dpor's; where it hands a program to abpress, the
        // options are checked again for abpress (`program::check`).
        Engine::Auto | Engine::Dpor => "dpor",
        Engine::Reference => "reference",
        Engine::Abpress => "abpress",
    }
}

fn model_name(m: Model) -> &'static str {
    match m {
        Model::Sc => "sc",
        Model::Tso => "tso",
        Model::Pso => "pso",
        Model::Pso1 => "pso1",
    }
}

/// One option: its clap id, how the user writes it, whether it applies to a run, and to
/// what it applies, in words.
struct Rule {
    id: &'static str,
    flag: &'static str,
    applies: fn(&Run) -> bool,
    to: &'static str,
}

const PROGRAM_ENGINES: &[&str] = &["dpor", "reference"];

/// The views draw a program execution the concrete machine replays: the symbolic engine,
/// DVE and `.cub` models have none to give them.
const fn view_rule(id: &'static str, flag: &'static str) -> Rule {
    Rule {
        id,
        flag,
        applies: |r| r.program_with(PROGRAM_ENGINES),
        to: "programs checked by --engine dpor or reference",
    }
}

const CHECK: &[Rule] = &[
    Rule {
        id: "file",
        flag: "FILE",
        applies: |_| true,
        to: "every input",
    },
    Rule {
        id: "define",
        flag: "-D",
        applies: |r| matches!(r.kind, Kind::C | Kind::Dve),
        to: "C source (.c, which clang preprocesses) and DVE models (-D NAME=VALUE sets an `input` constant)",
    },
    Rule {
        id: "include",
        flag: "-I",
        applies: |r| r.kind == Kind::C,
        to: "C source (.c, which clang preprocesses)",
    },
    Rule {
        id: "std",
        flag: "--std",
        applies: |r| matches!(r.kind, Kind::C | Kind::Preprocessed),
        to: "C that clang compiles (.c, .i)",
    },
    Rule {
        id: "clang",
        flag: "--clang",
        applies: |r| r.kind.is_c(),
        to: "C programs (.c, .i; for .ll and .bc, the compiler of fencer's C library)",
    },
    Rule {
        id: "cflags",
        flag: "-- CFLAGS",
        applies: |r| matches!(r.kind, Kind::C | Kind::Preprocessed),
        to: "C that clang compiles (.c, .i)",
    },
    Rule {
        id: "model",
        flag: "--model",
        applies: |_| true,
        to: "every input",
    },
    Rule {
        id: "engine",
        flag: "--engine",
        applies: |r| r.kind.is_program(),
        to: "programs (.fen, .litmus, C); DVE models have the explicit-state engine and .cub models the parameterized one",
    },
    Rule {
        id: "input_values",
        flag: "--input-values",
        applies: |r| r.kind.is_c() && r.program_with(PROGRAM_ENGINES),
        to: "C programs checked by --engine dpor or reference (abpress treats an input as an unknown value)",
    },
    Rule {
        id: "algo",
        flag: "--algo",
        applies: |r| r.program_with(&["dpor"]),
        to: "programs checked by --engine dpor",
    },
    Rule {
        id: "por",
        flag: "--por",
        applies: |r| r.kind.is_c() && matches!(r.args.engine, Engine::Abpress),
        to: "C programs checked by --engine abpress",
    },
    Rule {
        id: "verbose",
        flag: "--verbose",
        applies: |r| r.program_with(&["dpor"]),
        to: "programs checked by --engine dpor (it adds the races found and reversed)",
    },
    Rule {
        id: "all",
        flag: "--all",
        applies: |r| r.program_with(PROGRAM_ENGINES),
        to: "programs checked by --engine dpor or reference (a DVE model's is --keep-going)",
    },
    Rule {
        id: "json",
        flag: "--json",
        applies: |_| true,
        to: "every input",
    },
    Rule {
        id: "quiet",
        flag: "--quiet",
        applies: |_| true,
        to: "every input",
    },
    // Nidhugg's `--sc`, `--tso`, `--pso`: `--model`, whose rule they then meet.
    Rule {
        id: "sc",
        flag: "--sc",
        applies: |_| true,
        to: "every input",
    },
    Rule {
        id: "tso",
        flag: "--tso",
        applies: |_| true,
        to: "every input",
    },
    Rule {
        id: "pso",
        flag: "--pso",
        applies: |_| true,
        to: "every input",
    },
    Rule {
        id: "timeout",
        flag: "--timeout",
        applies: |_| true,
        to: "every input",
    },
    Rule {
        id: "max_executions",
        flag: "--max-executions",
        applies: |r| r.program_with(PROGRAM_ENGINES),
        to: "programs checked by --engine dpor or reference (DVE models take --max-states; .cub models and --engine abpress take --max-nodes)",
    },
    Rule {
        id: "max_depth",
        flag: "--max-depth",
        applies: |r| r.program_with(PROGRAM_ENGINES),
        to: "programs checked by --engine dpor or reference (--engine abpress answers for loops without a bound)",
    },
    Rule {
        id: "unroll",
        flag: "--unroll",
        applies: |r| r.program_with(PROGRAM_ENGINES),
        to: "programs checked by --engine dpor or reference (--engine abpress answers for loops without a bound)",
    },
    Rule {
        id: "deadlock",
        flag: "--deadlock",
        applies: |r| r.kind == Kind::Dve,
        to: "DVE models (a program's deadlocks are always violations; see --hangs)",
    },
    Rule {
        id: "reach",
        flag: "--reach",
        applies: |r| r.kind == Kind::Dve,
        to: "DVE models (a program's question is its assertions and final condition)",
    },
    Rule {
        id: "ltl",
        flag: "--ltl",
        applies: |r| r.kind == Kind::Dve,
        to: "DVE models",
    },
    Rule {
        id: "fair",
        flag: "--fair",
        applies: |r| r.kind == Kind::Dve,
        to: "DVE models checked against an LTL property",
    },
    Rule {
        id: "max_states",
        flag: "--max-states",
        applies: |r| r.kind == Kind::Dve,
        to: "DVE models (programs take --max-executions; .cub models --max-nodes)",
    },
    Rule {
        id: "keep_going",
        flag: "--keep-going",
        applies: |r| r.kind == Kind::Dve,
        to: "DVE models' reachability (a program's is --all)",
    },
    Rule {
        id: "buffer_bound",
        flag: "--buffer-bound",
        applies: |r| r.kind == Kind::Dve && matches!(r.args.model, Model::Tso | Model::Pso),
        to: "DVE models under --model tso or pso (pso1 has one slot per location; programs' buffers are unbounded)",
    },
    Rule {
        id: "keep_stale",
        flag: "--keep-stale",
        applies: |r| r.relaxed_dve(),
        to: "DVE models under --model pso1, tso or pso",
    },
    Rule {
        id: "buffer_private",
        flag: "--buffer-private",
        applies: |r| r.relaxed_dve(),
        to: "DVE models under --model pso1, tso or pso",
    },
    Rule {
        id: "atomic",
        flag: "--atomic",
        applies: |r| r.relaxed_dve(),
        to: "DVE models under --model pso1, tso or pso (a program's fences are in its source)",
    },
    Rule {
        id: "no_buffer_fairness",
        flag: "--no-buffer-fairness",
        applies: |r| r.relaxed_dve(),
        to: "DVE models under --model pso1, tso or pso, checked against an LTL property",
    },
    Rule {
        id: "max_nodes",
        flag: "--max-nodes",
        applies: |r| {
            r.kind == Kind::Cub || (r.kind.is_c() && matches!(r.args.engine, Engine::Abpress))
        },
        to: ".cub models and C programs checked by --engine abpress",
    },
    Rule {
        id: "invariant",
        flag: "--invariant",
        applies: |r| r.kind == Kind::Cub,
        to: ".cub models",
    },
    Rule {
        id: "brab",
        flag: "--brab",
        applies: |r| r.kind == Kind::Cub,
        to: ".cub models",
    },
    Rule {
        id: "forward_depth",
        flag: "--forward-depth",
        applies: |r| r.kind == Kind::Cub,
        to: ".cub models with --brab",
    },
    Rule {
        id: "jobs",
        flag: "--jobs",
        applies: |r| r.program_with(&["dpor"]) || r.kind == Kind::Dve,
        to: "programs checked by --engine dpor and DVE models (the other engines run on one thread)",
    },
    Rule {
        id: "no_pack",
        flag: "--no-pack",
        applies: |r| r.kind == Kind::Dve,
        to: "DVE models",
    },
    Rule {
        id: "no_spin_assume",
        flag: "--no-spin-assume",
        // --engine abpress keeps every loop as written already: the option asks for
        // what it does.
        applies: |r| r.kind.is_program(),
        to: "programs (.fen, .litmus, C)",
    },
    Rule {
        id: "no_spurious_wakeups",
        flag: "--no-spurious-wakeups",
        applies: |r| r.kind.is_c(),
        to: "C programs (.c, .i, .ll, .bc): it is about pthread_cond_wait",
    },
    Rule {
        id: "hangs",
        flag: "--hangs",
        // The symbolic engine does not look for hangs: it can honour `ignore` only.
        applies: |r| {
            r.program_with(PROGRAM_ENGINES)
                || (r.kind.is_c()
                    && matches!(r.args.engine, Engine::Abpress)
                    && r.args.hangs == Some(Hangs::Ignore))
        },
        to: "programs checked by --engine dpor or reference (--engine abpress does not look for hangs: only `--hangs ignore` describes it; a DVE model's deadlocks are asked for with --deadlock)",
    },
    view_rule("view", "--view"),
    view_rule("html", "--html"),
    view_rule("sarif", "--sarif"),
    view_rule("save_trace", "--save-trace"),
    view_rule("final_state", "--final"),
    Rule {
        id: "shard",
        flag: "--shard",
        applies: |r| r.program_with(&["dpor"]),
        to: "programs checked by --engine dpor (.fen, .litmus, C)",
    },
];

/// `robust`'s options that are `check`'s, held to `check`'s rules (robust takes programs
/// only, through DPOR), and its own.
const ROBUST_SHARED: &[&str] = &[
    "file",
    "model",
    "algo",
    "define",
    "include",
    "std",
    "clang",
    "cflags",
    "json",
    "verbose",
    "timeout",
    "max_executions",
    "max_depth",
    "unroll",
    "no_spin_assume",
    "no_spurious_wakeups",
    "view",
    "html",
    "sarif",
    "save_trace",
];
const ROBUST_OWN: &[Rule] = &[
    Rule {
        id: "method",
        flag: "--method",
        applies: |_| true,
        to: "every input",
    },
    Rule {
        id: "final_state",
        flag: "--final",
        applies: |_| false,
        to: "`check` and `litmus` (robust draws the first SC violation's witness)",
    },
];

/// `repair`'s options that are `check`'s, and its own.
const REPAIR_SHARED: &[&str] = &[
    "file",
    "model",
    "json",
    "timeout",
    "unroll",
    "max_depth",
    "no_spin_assume",
    "no_spurious_wakeups",
    "hangs",
    "define",
    "include",
    "std",
    "clang",
    "cflags",
    "ltl",
    "reach",
    "deadlock",
    "fair",
    "no_buffer_fairness",
    "max_states",
    "view",
    "html",
    "sarif",
    "save_trace",
    "final_state",
];
const REPAIR_OWN: &[Rule] = &[
    Rule {
        id: "goal",
        flag: "--goal",
        applies: |r| r.kind.is_program(),
        to: "programs (a DVE model is repaired against its properties, --reach or --deadlock)",
    },
    Rule {
        id: "diff",
        flag: "--diff",
        applies: |r| r.kind.is_program(),
        to: "programs (a DVE model's repair is a file of atomic writes: --write)",
    },
    Rule {
        id: "write",
        flag: "--write",
        applies: |_| true,
        to: "every input",
    },
    Rule {
        id: "all_minimal",
        flag: "--all-minimal",
        applies: |_| true,
        to: "every input",
    },
];

/// Which command's options are held.
#[derive(Clone, Copy, Debug)]
pub enum Cmd {
    Check,
    Robust,
    Repair,
}

fn rules(cmd: Cmd) -> Vec<&'static Rule> {
    let shared = |ids: &[&str]| -> Vec<&'static Rule> {
        ids.iter()
            .map(|id| CHECK.iter().find(|r| r.id == *id).expect("a rule of check"))
            .collect()
    };
    match cmd {
        Cmd::Check => CHECK.iter().collect(),
        Cmd::Robust => {
            let mut v = shared(ROBUST_SHARED);
            v.extend(ROBUST_OWN);
            v
        }
        Cmd::Repair => {
            let mut v = shared(REPAIR_SHARED);
            v.extend(REPAIR_OWN);
            v
        }
    }
}

/// The ids of the options `cmd` has rules for (every option it has, a test holds).
pub fn rule_ids(cmd: Cmd) -> Vec<&'static str> {
    rules(cmd).iter().map(|r| r.id).collect()
}

/// The first option given that does not apply to this run, as an error message; `None`
/// when every one applies (or the file's kind is unknown: loading it says so). `args`
/// are `check`'s options as `cmd` built them, with the options the user gave. For
/// `check`, an option whose value is not its default counts as given (a program that
/// calls the library sets fields, not flags); `robust` and `repair` set some fields for
/// their own runs, so only what their user gave counts.
pub fn refusal_in(cmd: Cmd, args: &Options) -> Option<String> {
    let kind = Kind::of(&args.file)?;
    let run = Run { kind, args };
    let set = match cmd {
        Cmd::Check => args.set(),
        _ => args.given.ids().cloned().collect(),
    };
    for rule in rules(cmd) {
        if set.contains(rule.id) && !(rule.applies)(&run) {
            return Some(format!(
                "error: {} does not apply to this run: it applies to {}; {}",
                rule.flag,
                rule.to,
                run.describe()
            ));
        }
    }
    None
}

/// [`refusal_in`] for `check`.
pub fn refusal(args: &Options) -> Option<String> {
    refusal_in(Cmd::Check, args)
}
