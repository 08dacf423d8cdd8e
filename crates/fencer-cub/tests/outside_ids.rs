//! A process cell whose `init` makes it differ from every process (flash's `Home <> p`):
//! the backward search's process sort is infinite, so such a state exists, and a trace
//! from it must run forward on a concrete instance where the cell holds an identifier of
//! no process. Before, replay gave process cells processes of the instance only, and the
//! real bug of a file like this one could not be confirmed.

use fencer_param::concrete::{explore, Explicit, Instance};
use fencer_param::{check, Options, Outcome, System};

/// `Owner` starts as no process; `take` needs the lock free (owned by no process) but
/// forgets to set the owner, so two processes enter. The bug needs `Owner` to hold an
/// identifier of no process: with `Owner` one of the processes nobody can ever take.
const BUGGY: &str = "
var Owner : proc
array Crit[proc] : bool

init (p) { Owner <> p && Crit[p] = False }

unsafe (i j) { Crit[i] = True && Crit[j] = True }

transition take (i)
requires { Crit[i] = False && Owner <> i && forall_other j. Owner <> j }
{ Crit[i] := True }
";

fn load(src: &str) -> System {
    fencer_cub::load("outside.cub", src, fencer_cub::Mode::Sc).expect("loads")
}

/// The reported run, checked step by step on its instance independently of replay: an
/// initial state, each step enabled and leading to the next state, the last one unsafe.
fn check_run(sys: &System, brab: Option<u8>) {
    let r = check(
        sys,
        &Options {
            brab,
            ..Default::default()
        },
    );
    let Outcome::Unsafe {
        trace,
        procs,
        states,
    } = r.outcome
    else {
        panic!("expected UNSAFE (brab {brab:?}), got {:?}", r.outcome);
    };
    let inst = Instance::new(sys, procs);
    assert!(inst.is_initial(&states[0]));
    let owner = inst.cell(0, &[]);
    assert!(
        states[0][owner] >= procs as i64,
        "`Owner` starts as a process of the instance: {:?}",
        states[0]
    );
    assert_eq!(states.len(), trace.len() + 1);
    for (k, step) in trace.iter().enumerate() {
        let t = &sys.transitions[step.transition];
        assert!(
            inst.enabled(&states[k], t, &step.args),
            "step {k} not enabled"
        );
        assert!(inst
            .fire(&states[k], t, &step.args)
            .contains(&states[k + 1]));
    }
    assert!(inst.is_unsafe(states.last().unwrap()));
}

#[test]
fn bug_needing_a_cell_outside_the_processes_replays() {
    let sys = load(BUGGY);
    check_run(&sys, None);
    check_run(&sys, Some(2));
    // The explicit exploration the cross-check compares with sees the same states.
    assert!(matches!(explore(&sys, 2, 1000), Explicit::Unsafe { .. }));
}

#[test]
fn fixed_version_is_safe() {
    let sys = load(&BUGGY.replace("{ Crit[i] := True }", "{ Crit[i] := True; Owner := i }"));
    let r = check(&sys, &Options::default());
    assert!(matches!(r.outcome, Outcome::Safe { .. }), "{:?}", r.outcome);
    assert!(matches!(explore(&sys, 3, 1000), Explicit::Safe { .. }));
}

/// Under `number_procs` the process sort is exactly those processes: `Owner` cannot
/// differ from both, no state is initial, and neither the search nor the explicit
/// exploration may invent an identifier of no process.
#[test]
fn number_procs_has_no_other_identifier() {
    let sys = load(&format!("number_procs 2\n{BUGGY}"));
    let r = check(&sys, &Options::default());
    assert!(matches!(r.outcome, Outcome::Safe { .. }), "{:?}", r.outcome);
    assert!(matches!(explore(&sys, 2, 1000), Explicit::Safe { .. }));
}
