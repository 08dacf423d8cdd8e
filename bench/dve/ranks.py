#!/usr/bin/env python3
"""One process against K MPI ranks on BEEM's instances (../shared/dve/beem/instances.tsv).

For every instance up to --max-states: the whole state space (--keep-going) by one process
(--jobs 1, and --jobs K) and by `mpirun -np K`; the counts must be equal. For every LTL
property up to --max-ltl states: the verdicts must be equal. Prints one line per run with
the times, and per rank the states per second of work, the bytes a state and the share of
time spent exchanging; exits 1 if any count or verdict differs.

    python3 bench/dve/ranks.py --ranks 2
    python3 bench/dve/ranks.py --ranks 4 --oversubscribe --max-states 300000
"""
import argparse, json, os, subprocess, sys, time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.normpath(os.path.join(here, "../.."))
ap = argparse.ArgumentParser()
ap.add_argument("--fencer", default=os.path.join(root, "target/release/fencer"))
ap.add_argument("--beem", default=os.path.join(root, "../shared/dve/beem"))
ap.add_argument("--ranks", type=int, default=2)
ap.add_argument("--oversubscribe", action="store_true")
ap.add_argument("--max-states", type=int, default=3_000_000)
ap.add_argument("--max-ltl", type=int, default=100_000)
ap.add_argument("--only", help="instances whose path contains this")
a = ap.parse_args()

env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
mpirun = ["mpirun", "-q", "--mca", "odls_base_sigkill_timeout", "0", "-np", str(a.ranks)] + (["--oversubscribe"] if a.oversubscribe else [])


def run(cmd):
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, env=env, cwd=root)
    wall = time.monotonic() - t
    try:
        out = json.loads(p.stdout)
    except ValueError:
        sys.exit(f"not JSON from {' '.join(cmd)}:\n{p.stdout.decode()}\n{p.stderr.decode()}")
    return out, wall


bad = 0
tot = {"one": 0.0, "jobs": 0.0, "ranks": 0.0}
rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(a.beem, "instances.tsv"))][1:]
print(f"{'instance':34} {'states':>10} {'1 proc':>8} {'--jobs':>8} {'ranks':>8}  per rank: states/s, bytes/state, exchange")
for c in rows:
    if a.only and a.only not in c[0]:
        continue
    states = int(c[4]) if c[4].isdigit() else None
    if states is None:
        continue
    f = os.path.join(a.beem, c[0])
    if c[9] == "" and states <= a.max_states:
        args = ["check", f, "--keep-going", "--json"]
    elif c[9] == "LTL" and states <= a.max_ltl:
        args = ["check", f, "--json"]
    else:
        continue
    one, t1 = run([a.fencer] + args + ["--jobs", "1"])
    par, tj = (one, t1) if c[9] else run([a.fencer] + args + ["--jobs", str(a.ranks)])
    many, tk = run(mpirun + [a.fencer] + args)
    same = one["verdict"] == many["verdict"]
    if c[9] == "":
        same &= all(one["stats"][k] == many["stats"][k] for k in ("states", "transitions"))
    bad += not same
    for k, t in (("one", t1), ("jobs", tj), ("ranks", tk)):
        tot[k] += t
    shares = "  ".join(
        f"{r['states'] / max(r['work_ms'], 1) * 1000:,.0f}/s {r['state_memory_bytes'] / max(r['states'], 1):.0f}B "
        f"{100 * r['comm_ms'] / max(r['work_ms'] + r['comm_ms'], 1):.0f}%"
        for r in many["stats"].get("ranks", [])
    )
    name = c[0] if c[9] == "" else f"{c[0]} (LTL {one['verdict']})"
    print(f"{name:34} {many['stats']['states']:>10} {t1:>8.2f} {tj:>8.2f} {tk:>8.2f}  {shares}{'' if same else '  DIFFERS'}", flush=True)
print(f"total: one process {tot['one']:.1f} s, --jobs {a.ranks} {tot['jobs']:.1f} s, {a.ranks} ranks {tot['ranks']:.1f} s; {bad} differ")
sys.exit(1 if bad else 0)
