"""Harness overhead: the real CLI + openai backend + runner against a loopback server with fixed latency.

Starts ``structbench.testing.openai_server`` in its own process, runs ``structbench run`` as a user
would (fresh response cache, ``--concurrency C``), and reads the server's request log to split the
wall time into start-up (process start to first request), request phase (first request received to
last answered) and tail (last answer to process exit). The ideal request phase is N * latency / C.

    python benchmarks/overhead.py --requests 2000 --latency 0.05 --concurrency 64
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--bench", default="structext:test", help="Benchmark whose samples are sent.")
    parser.add_argument("--strategy", default=None)
    parser.add_argument("--option", action="append", default=[], help="Benchmark option KEY=VALUE.")
    args = parser.parse_args()

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
            cmd = [sys.executable, "-m", "structbench", "run", "-m", "openai:overhead", "--base-url", url,
                   "-b", args.bench, "--limit", str(args.requests), "-c", str(args.concurrency),
                   "--out", str(tmp / "run"), "--no-progress"]
            if args.strategy:
                cmd += ["-s", args.strategy]
            for option in args.option:
                cmd += ["-o", option]
            env = dict(os.environ, STRUCTBENCH_CACHE=str(tmp / "cache"))
            start = time.time()
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
            end = time.time()
            if proc.returncode != 0:
                sys.exit(f"structbench run failed:\n{proc.stderr}")
        finally:
            server.kill()
            server.wait()
        rows = [line.split() for line in log.read_text().splitlines()]
    received = [float(r[1]) for r in rows]
    answered = [float(r[2]) for r in rows]
    n = len(rows)
    startup = min(received) - start
    phase = max(answered) - min(received)
    tail = end - max(answered)
    ideal = n * args.latency / args.concurrency
    print(f"requests answered   {n}")
    print(f"start-up            {startup:.3f} s   (target < 1 s)")
    print(f"request phase       {phase:.3f} s   ideal {ideal:.3f} s -> {100 * ideal / phase:.1f}% of ideal "
          f"({n / phase:.0f} req/s vs {args.concurrency / args.latency:.0f})   (target >= 95%)")
    print(f"tail                {tail:.3f} s")
    print(f"total wall time     {end - start:.3f} s   (target < 2.7 s)")


if __name__ == "__main__":
    main()
