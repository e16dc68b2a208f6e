"""Peak memory and wall time of the commands that read a finished run directory, on a large run.

Runs each command as a user would (``python -m structbench ...``, a fresh process), samples every 0.2 s the resident
set sizes (RSS) and proportional set sizes (PSS) of its process tree, summed, and prints one row per command: the
peak RSS and PSS sums, the wall time and the exit status. The run is made beforehand with ``structbench run`` (see
docs/develop/performance.md), for example 100,000 questions of generated StructFact against the loopback server:

    python -m structbench.testing.openai_server --reply A --port-file port &
    structbench run -m openai:m --base-url http://127.0.0.1:$(cat port)/v1 -b structfact:generated \\
        -o tables=synthetic -o per_task=20000 --no-cache --data-dir ../shared/datasets --out /tmp/big
    python benchmarks/readers.py /tmp/big --data-dir ../shared/datasets --export-option per_task=20000

``compare`` pairs the run with ``--other`` (by default the run itself). ``export --format parquet`` writes the same
questions' prompts (it reads the benchmark, not the run: ``--export-limit`` of them).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from scale import _tree_mib  # the same sampling of the process tree as the run's scale figures


def measure(args: list[str]) -> tuple[float, float, float, float, int, str]:
    """(peak RSS MiB, peak PSS MiB, wall seconds, CPU seconds, exit status, last line of stderr) of ``structbench
    ARGS``. CPU seconds (user and system, of the command and the processes it waited for) say what the command costs
    on a loaded machine, where the wall time says how busy the machine was."""
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "structbench", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    peak = [0.0, 0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            rss, pss = _tree_mib(proc.pid)
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)
            done.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
    lines = err.strip().splitlines()
    return peak[0], peak[1], seconds, used, proc.returncode, lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--other", type=Path, default=None, help="The run compare pairs with (default: the run).")
    parser.add_argument("--data-dir", default=None, help="For export (generated StructFact needs SciTab's tables).")
    parser.add_argument("--export-limit", type=int, default=None)
    parser.add_argument("--export-option", action="append", default=[], metavar="K=V",
                        help="An --option of the export (the run's, e.g. per_task=20000, to export as many questions).")
    parser.add_argument("--only", default=None, help="Comma-separated command names to run (default: all).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sb-readers-") as tmp:
        out = Path(tmp)
        run, other = str(args.run), str(args.other or args.run)
        export = ["export", "structfact:generated", "-o", "tables=synthetic", "--format", "parquet", "--out",
                  str(out / "questions.parquet"), *(["--data-dir", args.data_dir] if args.data_dir else []),
                  *(["--limit", str(args.export_limit)] if args.export_limit else []),
                  *[x for kv in args.export_option for x in ("-o", kv)]]
        commands = {
            "report": ["report", run, "--out", str(out / "report.html")],
            "compare": ["compare", run, other],
            "convert --to inspect": ["convert", run, "--to", "inspect", "--out", str(out / "inspect")],
            "convert --to lm-eval": ["convert", run, "--to", "lm-eval", "--out", str(out / "lmeval")],
            "publish": ["publish", run, "--out", str(out / "published")],
            "export --format parquet": export,
        }
        only = set(args.only.split(",")) if args.only else None
        print(f"load average at the start: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
        print("| command | peak RSS (tree) | peak PSS (tree) | wall | CPU | exit |")
        print("|---|---|---|---|---|---|")
        for name, argv in commands.items():
            if only is not None and name.split()[0] not in only and name not in only:
                continue
            rss, pss, seconds, cpu, code, last = measure(argv)
            note = f" ({last})" if code else ""
            print(f"| `{name}` | {rss:,.0f} MiB | {pss:,.0f} MiB | {seconds:.1f} s | {cpu:.1f} s | {code}{note} |",
                  flush=True)


if __name__ == "__main__":
    main()
