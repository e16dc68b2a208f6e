"""Throughput and memory at scale: ``structbench run`` over 10k and 100k samples against the loopback server.

For each sample count, server latency and ``--workers`` value, starts ``structbench.testing.openai_server``,
runs the real CLI with a fresh response cache (``structfact:generated`` questions by default, generated
from SciTab's tables, so ``--data-dir`` must hold the SciTab release), and reports:

- requests/s over the request phase (first request received to last answered, from the server's log),
  and the wall time of the whole command (generation of the questions included), and its tail (last answer to
  exit: the metrics and intervals);
- peak memory of the run, sampled every 0.2 s: the largest sum over the run's process tree (the run's process and
  its forked workers) of their resident set sizes (RSS: pages the workers share with the run's process counted in
  each, as a plain sum over the tree counts them), and of their proportional set sizes (PSS: shared pages counted
  once); and the driver's own peak RSS;
- that every record was written: the lines of ``samples.jsonl`` and the ``n`` of ``metrics.json``.

    python benchmarks/scale.py --data-dir ../shared/datasets --samples 10000,100000 --latency 0,0.05 \\
        --workers 1,2 --concurrency 64

The runner's own cost, apart from a benchmark's samples and metrics, with the tests' toy benchmark (tiny
samples, cheap metrics):

    PYTHONPATH=tests STRUCTBENCH_PLUGINS=toybench python benchmarks/scale.py --bench toy:big \\
        --size-option size=5 --samples 10000,100000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from structbench.testing.openai_server import read_log


def _tree_mib(root: int) -> tuple[float, float]:
    """(RSS, PSS) of ``root`` and its descendants (the forked workers), summed, in MiB."""
    rss = pss = 0.0
    try:
        procs = [psutil.Process(root), *psutil.Process(root).children(recursive=True)]
    except psutil.Error:
        return 0.0, 0.0
    for proc in procs:
        try:
            info = proc.memory_full_info()
        except psutil.Error:
            continue
        rss += info.rss / 2**20
        pss += info.pss / 2**20
    return rss, pss


def _rss_peak_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def measure(samples: int, latency: float, workers: int, args: argparse.Namespace) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        log, port_file = tmp / "requests.log", tmp / "port"
        server = subprocess.Popen(
            [sys.executable, "-m", "structbench.testing.openai_server", "--latency", str(latency), "--reply", "A",
             "--log", str(log), "--port-file", str(port_file)], stdout=subprocess.DEVNULL)
        try:
            while not port_file.exists():
                time.sleep(0.01)
            cmd = [sys.executable, "-m", "structbench", "run", "-m", "openai:scale", "--base-url",
                   f"http://127.0.0.1:{port_file.read_text()}/v1", "-b", args.bench, "--limit", str(samples),
                   "-c", str(args.concurrency), "--workers", str(workers), "--out", str(tmp / "run"),
                   "--no-progress", "--seed", "0"]
            options = list(args.option)
            if args.size_option:
                name, _, divisor = args.size_option.partition("=")
                options.append(f"{name}={math.ceil(samples / int(divisor or 1))}")
            for option in options:
                cmd += ["-o", option]
            if args.data_dir:
                cmd += ["--data-dir", args.data_dir]
            env = dict(os.environ, STRUCTBENCH_CACHE=str(tmp / "cache"))
            start = time.time()
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            peak = {"rss": 0.0, "pss": 0.0, "driver": 0.0}
            stop = threading.Event()

            def sample() -> None:
                while not stop.wait(0.2):
                    rss, pss = _tree_mib(proc.pid)
                    peak["rss"], peak["pss"] = max(peak["rss"], rss), max(peak["pss"], pss)
                    peak["driver"] = max(peak["driver"], _rss_peak_mib(proc.pid))

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            _, err = proc.communicate()
            end = time.time()
            stop.set()
            sampler.join()
            if proc.returncode != 0:
                sys.exit(f"structbench run failed ({proc.returncode}):\n{err}")
            with open(tmp / "run" / "samples.jsonl", "rb") as fh:
                lines = sum(1 for _ in fh)
            scored = sum(r["n"] for r in json.loads((tmp / "run" / "metrics.json").read_text())["results"])
        finally:
            server.kill()
            server.wait()
        rows = read_log(log)
    received = [r.received for r in rows]
    answered = [r.answered for r in rows]
    phase = max(answered) - min(received)
    return {"requests": len(rows), "rate": len(rows) / phase, "phase": phase, "wall": end - start,
            "before": min(received) - start, "tail": end - max(answered), "rss": peak["rss"], "pss": peak["pss"],
            "driver": peak["driver"], "lines": lines, "n": scored}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", default="10000,100000")
    parser.add_argument("--latency", default="0,0.05", help="Server latencies in seconds, comma-separated.")
    parser.add_argument("--workers", default=f"1,{os.cpu_count() or 1}")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--bench", default="structfact:generated")
    parser.add_argument("--option", action="append", default=None, help="Benchmark option KEY=VALUE (repeatable).")
    parser.add_argument("--size-option", default="per_task=4",
                        help="NAME=D: the benchmark option set to samples / D, so that it has enough samples.")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    if args.option is None:
        args.option = ["tables=scitab"] if args.bench == "structfact:generated" else []

    print(f"{args.bench}, concurrency {args.concurrency}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f} at the start")
    print("samples  latency  workers  requests/s  request phase  wall (first request at)  tail  peak RSS (tree)  "
          "peak PSS (tree)  driver RSS  records written  n")
    for samples in (int(x) for x in args.samples.split(",")):
        for latency in (float(x) for x in args.latency.split(",")):
            for workers in (int(x) for x in args.workers.split(",")):
                r = measure(samples, latency, workers, args)
                print(f"{samples:>7}  {latency * 1000:>5.0f} ms  {workers:>7}  {r['rate']:>10.0f}  "
                      f"{r['phase']:>11.1f} s  {r['wall']:>6.1f} s ({r['before']:>5.1f} s)  {r['tail']:>5.1f} s  "
                      f"{r['rss']:>11.0f} MiB  {r['pss']:>11.0f} MiB  {r['driver']:>6.0f} MiB  {r['lines']:>15}  "
                      f"{r['n']:>7}", flush=True)


if __name__ == "__main__":
    main()
