"""Harness overhead: the real CLI + openai backend + runner against a loopback server with fixed latency.

Starts ``structbench.testing.openai_server`` in its own process, runs ``structbench run`` as a user
would (fresh response cache, ``--concurrency C``, the default ``--workers`` unless given), and reads the
server's request log to split the wall time into start-up (process start to first request), request
phase (first request received to last answered) and tail (last answer to process exit). The ideal
request phase is N * latency / C. ``--repeat`` runs it several times and prints each run and the range
(the development machine is shared: single runs are noisy). The server's own mean hold time shows how
much of the gap is the server's timer rather than the harness; the harness's CPU time per request
(every structbench process, start-up included) is less disturbed by other load than the wall times are.

A shared machine's speed drifts by a quarter or more over minutes, so two trees are compared only in turn:
``--against DIR`` (repeatable) adds the source tree DIR (a checkout or ``git worktree`` of another commit), and each
round runs this script's tree and each DIR once, each importing its own ``src``, starting from a different tree each
round (the first run of a round fared better). Each figure is then printed per tree as its median and range, and
beside each DIR, the median of the per-round differences from this tree.

CPU time also moves with the machine. ``--instructions`` counts instead the instructions every structbench process
executes (valgrind's callgrind, which must be installed; the run is then some fifty times slower, so its wall times
are not shown): the same tree gives the same count within a fraction of a percent whatever the load, so changes of a
few percent show in one round. They are split between the run's process up to its workers' fork (imports, planning),
that process after it, and the workers with any other process the run started. Instructions are not time: waiting on
memory, the kernel's share (system calls, page faults, switching processes) and several processes sharing cores
count for nothing there, so the CPU time stays the figure the target is set in.

``--by-process`` splits the CPU time as ``--instructions`` splits the instructions: the run is started through a
small wrapper (``BY_PROCESS``: ``python -m structbench`` that notes its own CPU time at each fork and at its end), and
each run's CPU is also printed as the seconds up to the workers' fork, of the run's process after it, and of the
workers (with the run's other children). It found OpenBLAS's spinning threads in the run's process after the fork (#44).

    python benchmarks/overhead.py --requests 2000 --latency 0.05 --concurrency 64 --repeat 5
    git worktree add /tmp/before HEAD~3 && python benchmarks/overhead.py --repeat 10 --against /tmp/before
    python benchmarks/overhead.py --requests 600 --instructions --against /tmp/before
    python benchmarks/overhead.py --repeat 3 --by-process
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from structbench.testing.openai_server import read_log

FIGURES = {"startup": ("start-up", "s", 3), "share": ("request phase", "% of ideal", 1),
           "total": ("total wall time", "s", 3), "cpu": ("harness CPU", "us per request", 0)}
"""The figures ``--against`` compares: label, unit, decimals."""
INSTRUCTION_FIGURES = {"instr": ("instructions", "thousands per request", 0),
                       "instr_start": ("up to the workers' fork", "millions", 0),
                       "instr_driver": ("the run's process after it", "millions", 0),
                       "instr_children": ("workers and other children", "millions", 0)}
"""The figures of ``--instructions``, which ``--against`` compares instead."""
PROCESS_FIGURES = {"cpu_start": ("CPU up to the workers' fork", "s", 3),
                   "cpu_driver": ("CPU of the run's process after it", "s", 3),
                   "cpu_children": ("CPU of the workers and other children", "s", 3)}
"""What ``--by-process`` adds: the harness's CPU time split as ``--instructions`` splits its instructions."""
BY_PROCESS = """
import atexit, json, os, resource, runpy, sys, time

pid, at_fork = os.getpid(), []


def cpu(usage):
    return usage.ru_utime + usage.ru_stime


def before_fork():
    if os.getpid() == pid:
        at_fork.append((time.time(), cpu(resource.getrusage(resource.RUSAGE_SELF))))


def write():
    if os.getpid() == pid:
        own = cpu(resource.getrusage(resource.RUSAGE_SELF))
        with open(os.environ["OVERHEAD_BY_PROCESS"], "w") as f:
            json.dump({"forks": at_fork, "own": own, "children": cpu(resource.getrusage(resource.RUSAGE_CHILDREN))}, f)


os.register_at_fork(before=before_fork)
atexit.register(write)
sys.argv = ["structbench", *sys.argv[1:]]
runpy.run_module("structbench", run_name="__main__", alter_sys=True)
"""
"""``python -c`` this, then ``structbench``'s arguments: ``python -m structbench`` that writes to
``$OVERHEAD_BY_PROCESS`` the time and its CPU time at each fork, its CPU time at its end, and its children's (reaped
by then)."""
CALLGRIND = ["valgrind", "--tool=callgrind", "--trace-children=yes", "--dump-before=fork", "-q"]
"""Counts every process's instructions; the run's process writes what it counted before each fork separately."""
_OUT_FILE = re.compile(r"cg\.(\d+)(?:\.(\d+))?$")


def measure(args: argparse.Namespace, tree: Path | None = None) -> dict[str, float]:
    """One run; ``tree``: the source tree whose ``src`` the run imports (None: the installed structbench)."""
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        log, port_file = tmp / "requests.log", tmp / "port"
        server = subprocess.Popen(
            [sys.executable, "-m", "structbench.testing.openai_server", "--latency", str(args.latency),
             "--log", str(log), "--port-file", str(port_file)],
            stdout=subprocess.DEVNULL,
        )
        try:
            while not port_file.exists():
                time.sleep(0.01)
            url = f"http://127.0.0.1:{port_file.read_text()}/v1"
            launch = ["-c", BY_PROCESS] if args.by_process else ["-m", "structbench"]
            cmd = [sys.executable, *launch, "run", "-m", "openai:overhead", "--base-url", url,
                   "-b", args.bench, "--limit", str(args.requests), "-c", str(args.concurrency),
                   "--out", str(tmp / "run"), "--no-progress"]
            if args.workers is not None:
                cmd += ["--workers", str(args.workers)]
            if args.strategy:
                cmd += ["-s", args.strategy]
            for option in args.option:
                cmd += ["-o", option]
            if args.instructions:
                cmd = [*CALLGRIND, f"--callgrind-out-file={tmp / 'cg.%p'}", *cmd]
            env = dict(os.environ, STRUCTBENCH_CACHE=str(tmp / "cache"), OVERHEAD_BY_PROCESS=str(tmp / "by-process"))
            if tree is not None:
                env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree / "src"), env.get("PYTHONPATH")]))
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.time()
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            _, stderr = proc.communicate()
            end = time.time()
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if proc.returncode != 0:
                sys.exit(f"structbench run failed:\n{stderr}")
        finally:
            server.kill()
            server.wait()
        rows = read_log(log)
        if args.instructions:
            return {"n": len(rows), **instructions(tmp, proc.pid, len(rows))}
        split = by_process(tmp / "by-process", min(r.received for r in rows)) if args.by_process else {}
    received = [r.received for r in rows]
    answered = [r.answered for r in rows]
    n = len(rows)
    phase = max(answered) - min(received)
    ideal = n * args.latency / args.concurrency
    return {
        "n": n,
        "startup": min(received) - start,
        "phase": phase,
        "share": 100 * ideal / phase,
        "rate": n / phase,
        "ideal": ideal,
        "tail": end - max(answered),
        "total": end - start,
        "hold": 1000 * sum(a - r for a, r in zip(answered, received, strict=True)) / n,
        "cpu": 1e6 * (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) / n,
        **split,
    }


def by_process(path: Path, first_request: float) -> dict[str, float]:
    """``BY_PROCESS``'s figures: CPU seconds up to the workers' fork (the run's last fork before ``first_request``;
    none, 0, in a run of one process), of the run's process after it, of its children."""
    if not path.exists():
        sys.exit(f"the run wrote no CPU split ({path.name}): did it end before its exit handlers ran?")
    got = json.loads(path.read_text())
    start = max((cpu for at, cpu in got["forks"] if at < first_request), default=0.0)
    return {"cpu_start": start, "cpu_driver": got["own"] - start, "cpu_children": got["children"]}


def instructions(tmp: Path, pid: int, n: int) -> dict[str, float]:
    """What callgrind counted in the run's process ``pid`` (before its first fork, and after) and in every other."""
    counted: dict[int, dict[int, int]] = {}
    for path in tmp.glob("cg.*"):
        match = _OUT_FILE.search(path.name)
        if match is None:
            continue
        total = next((int(line.split()[1]) for line in path.read_text().splitlines()
                      if line.startswith(("totals:", "summary:"))), 0)
        counted.setdefault(int(match.group(1)), {})[int(match.group(2) or 0)] = total
    if pid not in counted:
        sys.exit(f"callgrind wrote nothing for the run's process {pid}: see valgrind's messages above")
    own = counted.pop(pid)
    forks = [part for part in own if part > 0]  # a dump before each fork; none where the run forked no worker
    before = own[min(forks)] if forks else 0
    children = sum(sum(parts.values()) for parts in counted.values())
    return {"instr": (sum(own.values()) + children) / n / 1e3, "instr_start": before / 1e6,
            "instr_driver": (sum(own.values()) - before) / 1e6, "instr_children": children / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=None, help="--workers of the run (default: the run's).")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--bench", default="structext:test", help="Benchmark whose samples are sent.")
    parser.add_argument("--strategy", default=None)
    parser.add_argument("--option", action="append", default=[], help="Benchmark option KEY=VALUE.")
    parser.add_argument("--against", action="append", default=[], type=Path, metavar="DIR",
                        help="Another source tree to compare with, run in turn with this one (repeatable).")
    parser.add_argument("--instructions", action="store_true",
                        help="Count the instructions executed (valgrind's callgrind) instead of timing the run.")
    parser.add_argument("--by-process", action="store_true",
                        help="Also split the harness's CPU time: up to the workers' fork, the run's process after it, "
                             "the workers (the run is started through a wrapper that reads its own usage).")
    args = parser.parse_args()
    if args.by_process and args.instructions:
        parser.error("--by-process splits CPU time, which --instructions does not measure")
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions counts with valgrind, which is not installed (apt-get install valgrind)")
    for tree in args.against:
        if not (tree / "src" / "structbench" / "__init__.py").is_file():
            parser.error(f"--against {tree}: not a structbench source tree (no src/structbench/__init__.py)")
    if args.against:
        compare(args)
        return
    if args.instructions:
        count(args)
        return

    runs = []
    for i in range(args.repeat):
        load = os.getloadavg()[0]
        r = measure(args)
        runs.append(r)
        if args.repeat > 1:
            print(f"run {i + 1}: start-up {r['startup']:.3f} s, request phase {r['phase']:.3f} s = {r['share']:.1f}% "
                  f"of ideal, tail {r['tail']:.3f} s, total {r['total']:.3f} s, server hold {r['hold']:.2f} ms, "
                  f"harness CPU {r['cpu']:.0f} us/request{split_of(r)} "
                  f"(load average before: {load:.1f})")

    def span(key: str, fmt: str = ".3f") -> str:
        values = sorted(r[key] for r in runs)
        return f"{values[0]:{fmt}}" if len(values) == 1 else f"{values[0]:{fmt}}-{values[-1]:{fmt}}"

    print(f"requests answered   {span('n', '.0f')}")
    print(f"start-up            {span('startup')} s   (target < 0.5 s)")
    print(f"request phase       {span('phase')} s   ideal {runs[0]['ideal']:.3f} s -> {span('share', '.1f')}% of ideal "
          f"({span('rate', '.0f')} req/s vs {args.concurrency / args.latency:.0f})   (target >= 95%)")
    print(f"tail                {span('tail')} s")
    print(f"total wall time     {span('total')} s   (target < 2.5 s)")
    print(f"server hold         {span('hold', '.2f')} ms per request (the latency asked: {1000 * args.latency:g} ms)")
    print(f"harness CPU         {span('cpu', '.0f')} us per request (every structbench process, start-up included)   "
          "(target < 1000 us)")
    if args.by_process:
        print(f"  of it (s)         up to the workers' fork {span('cpu_start')}, the run's process after it "
              f"{span('cpu_driver')}, the workers and other children {span('cpu_children')}")


def split_of(r: dict[str, float]) -> str:
    """``--by-process``'s split of one run, for its line (empty without it)."""
    if "cpu_start" not in r:
        return ""
    return f" = {r['cpu_start']:.3f} + {r['cpu_driver']:.3f} + {r['cpu_children']:.3f} s"


def count(args: argparse.Namespace) -> None:
    """``--instructions`` without ``--against``: each run's counts, then their range."""
    runs = [measure(args) for _ in range(args.repeat)]
    for key, (label, unit, places) in INSTRUCTION_FIGURES.items():
        values = [r[key] for r in runs]
        spread = f"{min(values):,.{places}f}" + (f"-{max(values):,.{places}f}" if len(values) > 1 else "")
        print(f"{label + ' (' + unit + ')':<52}{spread}")
    print(f"requests answered: {min(r['n'] for r in runs):.0f}-{max(r['n'] for r in runs):.0f}; "
          "instructions are the run's own processes, the loopback server's not counted")


def compare(args: argparse.Namespace) -> None:
    """``--repeat`` rounds, each running every tree once, this tree and the ``--against`` ones: round ``i`` starts
    from tree ``i`` (modulo their number), so each tree goes first equally often. A tree that went first in every
    round measured a sooner start-up and less CPU against another than with the order turned round (12 rounds each
    way, 2026-11-30)."""
    trees = [Path(__file__).resolve().parent.parent, *args.against]  # this script's tree by its own src too
    runs: list[list[dict[str, float]]] = [[] for _ in trees]
    for i in range(args.repeat):
        first = i % len(trees)
        for n in [*range(first, len(trees)), *range(first)]:
            tree, kept = trees[n], runs[n]
            r = measure(args, tree)
            kept.append(r)
            if args.instructions:
                print(f"round {i + 1} {tree}: {r['instr']:,.0f} thousand instructions a request", flush=True)
            else:
                print(f"round {i + 1} {tree}: start-up {r['startup']:.3f} s, request phase {r['share']:.1f}%, "
                      f"total {r['total']:.3f} s, harness CPU {r['cpu']:.0f} us/request{split_of(r)}", flush=True)
    figures = INSTRUCTION_FIGURES if args.instructions else FIGURES | (PROCESS_FIGURES if args.by_process else {})
    for key, (label, unit, places) in figures.items():
        print(f"{label} ({unit}), median (range) over {args.repeat} rounds:")
        for n, (tree, kept) in enumerate(zip(trees, runs, strict=True)):
            values = [r[key] for r in kept]
            line = (f"  {statistics.median(values):.{places}f} ({min(values):.{places}f}-{max(values):.{places}f})  "
                    f"{tree}")
            if n:
                delta = statistics.median(r[key] - o[key] for r, o in zip(runs[0], kept, strict=True))
                line += f"   this tree minus it, per round: median {delta:+.{places}f}"
            print(line)


if __name__ == "__main__":
    main()
