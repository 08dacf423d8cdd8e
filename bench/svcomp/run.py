#!/usr/bin/env python3
"""Run fencer on SV-COMP concurrency tasks (property unreach-call) and sort its answers.

    python3 bench/svcomp/run.py CORPUS --fencer BIN [--engines dpor,abpress] [--model sc]
                                [--timeout 10] [--out results.tsv] [options]

CORPUS holds an index.tsv (tab-separated, with a header) whose first four columns are the
task's program file (relative to CORPUS), its folder, the expected unreach-call verdict
(`true`: the error function is never called; `false`: some execution calls it) and whether
the program calls `__VERIFIER_nondet_*` (yes/no); further columns are ignored. See
bench/svcomp/README.md for how such a corpus is made (the tasks are not in this repository).

Each task runs once per engine, one run at a time, as
`fencer check FILE --json --engine E --model M --timeout T` (plus `--jobs 1` for dpor
unless --jobs says otherwise, `--max-depth N` with --max-depth, and the --cflags after
`--`). The answer is sorted into one category:

  correct        the verdict is the expected one
  wrong-safe     fencer says safe, the task is false (the worst: a missed bug)
  wrong-unsafe   fencer reports the error call on a true task
  other-viol     fencer reports a violation that is not the error call (a memory error,
                 a deadlock, a hang, `abort()`, a failing C `assert`, ...): unreach-call
                 tasks say nothing about those, so it is neither correct nor wrong
  bounded        exit 3 without a violation, the exploration cut by a bound (depth,
                 unroll, recursion, local loop): safe only up to that bound
  timeout/limit  exit 3 stopped by --timeout or another budget (executions, states,
                 memory), or killed after the timeout plus a grace period
  refused        exit 2: fencer cannot model the program (the first line says why)
  internal       exit 4 (a counterexample fencer could not confirm), 101 (a panic), a
                 signal, or output that is not fencer's JSON

A violation is the error call when its counterexample has kind `assertion` and its
message names `reach_error` or `__VERIFIER_error`.

The results go to a TSV (one row per task and engine); a summary table per engine and per
folder is printed at the end, followed by the wrong verdicts, the internal errors and the
other violations, and the refusals grouped by their first line.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

CATEGORIES = [
    "correct",
    "wrong-safe",
    "wrong-unsafe",
    "other-viol",
    "bounded",
    "timeout/limit",
    "refused",
    "internal",
]
COLUMNS = [
    "task",
    "folder",
    "expected",
    "engine",
    "verdict",
    "category",
    "exit",
    "seconds",
    "kind",
    "stopped_by",
    "message",
]
ERROR_CALL = re.compile(r"reach_error|__VERIFIER_error")
BOUNDS = {"depth", "unroll", "recursion", "local-loop"}


def read_index(corpus):
    path = os.path.join(corpus, "index.tsv")
    tasks = []
    with open(path) as f:
        header = f.readline()
        if not header.startswith("task"):
            sys.exit(f"{path}: the first line should be a header starting with `task`")
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 4 or not cols[0]:
                continue
            if cols[2] not in ("true", "false"):
                sys.exit(f"{path}: {cols[0]}: expected verdict {cols[2]!r} is not true/false")
            t = {"task": cols[0], "folder": cols[1], "expected": cols[2], "nondet": cols[3]}
            names = header.rstrip("\n").split("\t")
            if "cflags" in names and names.index("cflags") < len(cols):
                t["cflags"] = cols[names.index("cflags")]
            tasks.append(t)
    return tasks


def one_line(s, limit=300):
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def classify(expected, code, out, err):
    """(verdict, category, kind, stopped_by, message) of one run."""
    try:
        j = json.loads(out) if out.strip() else None
    except json.JSONDecodeError:
        j = None
    first_err = next((l for l in err.splitlines() if l.strip()), "")
    if code in (4, 101) or code < 0 or (j is None and code != 2):
        what = {4: "internal error", 101: "panic"}.get(code, f"exit {code}")
        if code < 0:
            what = f"killed by signal {-code}"
        # The panic message is the line after "panicked at", when there is one.
        lines = [l for l in err.splitlines() if l.strip()]
        msg = first_err
        for i, l in enumerate(lines):
            if "panicked at" in l:
                msg = l + (" " + lines[i + 1] if i + 1 < len(lines) else "")
                break
        return ("error", "internal", "", "", one_line(f"{what}: {msg}"))
    if code == 2:
        if j and isinstance(j.get("error"), dict):
            e = j["error"]
            lines = [l for l in (e.get("message") or "").splitlines() if l.strip()]
            # The first line; for a compile error, the compiler's first error too.
            msg = lines[0] if lines else ""
            if msg.rstrip().endswith(":"):
                msg += " " + next((l.strip() for l in lines[1:] if "error:" in l), "")
            where = f"{os.path.basename(e.get('file') or '')}:{e.get('line') or ''}"
            return ("refused", "refused", "", "", one_line(f"{msg} [{where}]"))
        return ("refused", "refused", "", "", one_line(first_err))
    verdict = j.get("verdict", "")
    stopped = j.get("stopped_by") or ""
    cex = j.get("counterexample") or None
    if verdict == "violation" and cex:
        kind = cex.get("kind", "")
        msg = one_line(cex.get("message", ""))
        where = f"{os.path.basename(cex.get('file') or '')}:{cex.get('line') or ''}"
        if kind == "assertion" and ERROR_CALL.search(msg):
            cat = "correct" if expected == "false" else "wrong-unsafe"
            return ("unsafe", cat, kind, stopped, f"{msg} [{where}]")
        return ("other-violation", "other-viol", kind, stopped, f"{msg} [{where}]")
    if verdict == "safe" and code == 0:
        cat = "correct" if expected == "true" else "wrong-safe"
        return ("safe", cat, "", stopped, "")
    # Incomplete (exit 3), or safe with a bound.
    reason = ""
    sym = j.get("symbolic") or {}
    if sym.get("incomplete_reason"):
        reason = str(sym["incomplete_reason"])
    if stopped in BOUNDS:
        return ("bounded", "bounded", "", stopped, one_line(reason))
    if stopped:
        return ("incomplete", "timeout/limit", "", stopped, one_line(reason))
    # Exit 3 with no limit named: the result holds up to a bound (cut executions).
    stats = j.get("stats") or {}
    cuts = [k for k in ("depth_cut", "unroll_cut", "recursion_cut", "local_loop_cut") if stats.get(k)]
    return ("bounded", "bounded", "", ",".join(cuts) or f"exit {code}", one_line(reason))


def run_one(args, task, engine):
    path = os.path.join(args.corpus, task["task"])
    cmd = [
        args.fencer,
        "check",
        path,
        "--json",
        "--engine",
        engine,
        "--model",
        args.model,
        "--timeout",
        str(args.timeout),
    ]
    if engine == "dpor" and args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    if engine == "dpor" and args.max_depth:
        cmd += ["--max-depth", str(args.max_depth)]
    if args.unroll:
        cmd += ["--unroll", str(args.unroll)]
    flags = args.cflags.split()
    # A task's own flags (index column `cflags`); -I DIR is relative to the task's directory.
    own = task.get("cflags", "").split()
    for i, f in enumerate(own):
        if f.startswith("-I") and len(f) > 2 and not os.path.isabs(f[2:]):
            own[i] = "-I" + os.path.join(os.path.dirname(path), f[2:])
        elif i > 0 and own[i - 1] == "-I" and not os.path.isabs(f):
            own[i] = os.path.join(os.path.dirname(path), f)
    flags += own
    if flags:
        cmd += ["--"] + flags
    t0 = time.monotonic()
    try:
        p = subprocess.run(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=args.timeout + args.grace,
            text=True,
            errors="replace",
        )
        code, out, err = p.returncode, p.stdout, p.stderr
        secs = time.monotonic() - t0
        verdict, cat, kind, stopped, msg = classify(task["expected"], code, out, err)
    except subprocess.TimeoutExpired:
        secs = time.monotonic() - t0
        code, verdict, cat, kind, stopped = -9, "killed", "timeout/limit", "", "hard-timeout"
        msg = f"killed after {args.timeout + args.grace} s"
    return {
        "task": task["task"],
        "folder": task["folder"],
        "expected": task["expected"],
        "engine": engine,
        "verdict": verdict,
        "category": cat,
        "exit": str(code),
        "seconds": f"{secs:.2f}",
        "kind": kind,
        "stopped_by": stopped,
        "message": msg.replace("\t", " "),
    }


def table(rows, key):
    groups = collections.OrderedDict()
    for r in sorted(rows, key=lambda r: key(r)):
        groups.setdefault(key(r), collections.Counter())[r["category"]] += 1
    head = ["", "runs"] + CATEGORIES
    lines = [head]
    total = collections.Counter()
    for k, c in groups.items():
        lines.append([k, str(sum(c.values()))] + [str(c[x]) for x in CATEGORIES])
        total.update(c)
    if len(groups) > 1:
        lines.append(["total", str(sum(total.values()))] + [str(total[x]) for x in CATEGORIES])
    widths = [max(len(l[i]) for l in lines) for i in range(len(head))]
    return "\n".join(
        "  ".join(s.ljust(w) if i == 0 else s.rjust(w) for i, (s, w) in enumerate(zip(l, widths)))
        for l in lines
    )


def summary(rows):
    out = []
    engines = sorted({r["engine"] for r in rows})
    out.append("Per engine:\n" + table(rows, lambda r: r["engine"]))
    for e in engines:
        er = [r for r in rows if r["engine"] == e]
        out.append(f"Per folder, engine {e}:\n" + table(er, lambda r: r["folder"]))
    for cat, title in [
        ("wrong-safe", "Wrong: SAFE on a false task"),
        ("wrong-unsafe", "Wrong: the error call on a true task"),
        ("internal", "Internal errors"),
        ("other-viol", "Other violations (not the error call)"),
    ]:
        sel = [r for r in rows if r["category"] == cat]
        if sel:
            out.append(
                f"{title} ({len(sel)}):\n"
                + "\n".join(
                    f"  {r['engine']:8} {r['task']}  [{r['expected']}]  {r['kind'] + ': ' if r['kind'] else ''}{r['message']}"
                    for r in sel
                )
            )
    ref = collections.Counter()
    for r in rows:
        if r["category"] == "refused":
            # The reason without the place, so that one cause is one line.
            reason = re.sub(r"\s*\[[^\]]*\]$", "", r["message"])
            reason = re.sub(r"^\S+: error: ", "", reason)
            reason = re.sub(r"^\S+:\d+(:\d+)? \(in `[^`]*`\): ", "", reason)
            reason = re.sub(r"^in function `[^`]*`: ", "", reason)
            reason = re.sub(r"\s+help: .*$", "", reason)
            reason = re.sub(r"^\S+\.[ci]:\d+(:\d+)?: error: ", "", reason)
            ref[(r["engine"], reason)] += 1
    if ref:
        out.append(
            "Refusals by reason (engine, count, reason):\n"
            + "\n".join(f"  {e:8} {n:4}  {m}" for (e, m), n in ref.most_common())
        )
    return "\n\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", help="directory with index.tsv and the task files")
    ap.add_argument("--fencer", required=True, help="the fencer binary")
    ap.add_argument("--engines", default="dpor,abpress", help="comma-separated (default dpor,abpress)")
    ap.add_argument("--model", default="sc", help="memory model (default sc; abpress is SC only)")
    ap.add_argument("--timeout", type=int, default=10, help="seconds per run, passed to fencer (default 10)")
    ap.add_argument("--grace", type=int, default=20, help="seconds past --timeout before a run is killed (default 20)")
    ap.add_argument("--jobs", type=int, default=1, help="--jobs for dpor (default 1; 0: fencer's default)")
    ap.add_argument("--max-depth", type=int, default=0, help="--max-depth for dpor (default: fencer's)")
    ap.add_argument("--unroll", type=int, default=0, help="--unroll for every engine (default: none)")
    ap.add_argument("--cflags", default="", help="compiler flags passed after `--`, e.g. -m32 (default none)")
    ap.add_argument("--out", default="svcomp-results.tsv", help="results TSV (default svcomp-results.tsv)")
    ap.add_argument("--filter", default="", help="only tasks whose path matches this regular expression")
    ap.add_argument("--resume", action="store_true", help="keep the rows already in --out and run the rest")
    ap.add_argument("--summary-only", action="store_true", help="print the summary of --out and run nothing")
    args = ap.parse_args()

    engines = [e for e in args.engines.split(",") if e]
    done = {}
    if (args.resume or args.summary_only) and os.path.exists(args.out):
        with open(args.out) as f:
            head = f.readline().rstrip("\n").split("\t")
            for line in f:
                r = dict(zip(head, line.rstrip("\n").split("\t")))
                done[(r["task"], r["engine"])] = r
    if args.summary_only:
        print(summary(list(done.values())))
        return
    if not os.access(args.fencer, os.X_OK):
        sys.exit(f"{args.fencer}: not an executable")
    tasks = read_index(args.corpus)
    if args.filter:
        tasks = [t for t in tasks if re.search(args.filter, t["task"])]
    rows = list(done.values()) if args.resume else []
    todo = [(t, e) for t in tasks for e in engines if (t["task"], e) not in done]
    mode = "a" if args.resume and done else "w"
    with open(args.out, mode) as f:
        if mode == "w":
            f.write("\t".join(COLUMNS) + "\n")
        t0 = time.monotonic()
        for i, (t, e) in enumerate(todo, 1):
            r = run_one(args, t, e)
            rows.append(r)
            f.write("\t".join(r[c] for c in COLUMNS) + "\n")
            f.flush()
            print(
                f"[{i}/{len(todo)} {time.monotonic() - t0:6.0f}s] {e:8} {r['category']:13} {r['seconds']:>6}s  {t['task']}",
                file=sys.stderr,
                flush=True,
            )
    print(summary(rows))


if __name__ == "__main__":
    main()
