"""``structbench run --executor ray`` on a Ray cluster this test starts on loopback (``ray start --head``).

Skipped without Ray (``pip install 'structbench[ray]'``) unless ``STRUCTBENCH_REQUIRE_EXTRAS=1`` (CI), which
makes a missing Ray a failure."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extras import require_extra
from faults import child_pythonpath, free_port, serve
from patience import patience
from structbench.testing.cli import invoke
from structbench.testing.openai_server import request_digest

TESTS = Path(__file__).resolve().parents[1]
"""A child process imports this checkout's structbench (not another one installed) and the test plugins."""
NO_AUTH = {"RAY_AUTH_MODE": "disabled"}
"""Ray 2.60 turns token authentication on for ``ray start`` once ``~/.ray/auth_token`` exists (any earlier
``ray.init()`` without an address writes it), while a driver given an address never turns it on: the test's
cluster and its drivers say how they authenticate, whatever an earlier Ray run left in the home folder."""

require_extra("ray", "ray")


def without_usage(run_dir: Path) -> dict[str, Any]:
    """A run's metrics.json without its token usage."""
    data = dict(json.loads((run_dir / "metrics.json").read_text()))
    data.pop("usage", None)
    for result in data["results"]:
        result.pop("usage", None)
    return data


def _env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_PLUGINS="toybench",
                STRUCTBENCH_CACHE=str(tmp_path / "cache"), **NO_AUTH)


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A one-node Ray cluster on 127.0.0.1 with two CPUs; its address. Stopped (every process it started)
    by ending ``ray start --block``."""
    temp = tempfile.mkdtemp(prefix="sbray", dir="/tmp")  # Ray's socket paths must stay short
    port = free_port()
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_PLUGINS="toybench", **NO_AUTH)
    log = open(Path(temp) / "ray-start.log", "w")  # noqa: SIM115
    head = subprocess.Popen(
        [str(Path(sys.executable).parent / "ray"), "start", "--head", f"--port={port}", "--node-ip-address=127.0.0.1",
         "--num-cpus=2", "--num-gpus=0", "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}",
         "--object-store-memory=100000000", "--block"],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + patience(120)
        while True:
            assert head.poll() is None, (Path(temp) / "ray-start.log").read_text()
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "the Ray head did not start"
            time.sleep(0.2)
        time.sleep(2)  # the raylet registers after the GCS port opens
        yield f"127.0.0.1:{port}"
    finally:
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(timeout=patience(60))
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait()
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


def ended(pids: list[int]) -> None:
    """Wait until none of these processes (the driver's Ray actors, on this machine) is alive."""
    deadline = time.monotonic() + patience(60)
    while any(_alive(pid) for pid in pids):
        assert time.monotonic() < deadline, f"Ray did not end the actors {pids}"
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def cached_digests(cache: Path) -> set[str]:
    """Request digests (as the server logs them) of every response the cache holds."""
    with sqlite3.connect(cache) as conn:
        rows = conn.execute("SELECT request FROM responses").fetchall()
    return {request_digest({"messages": json.loads(r[0])["messages_or_prompt"]}) for r in rows}


def records(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "samples.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.endswith("}")] if path.exists() else []


def outcomes(run_dir: Path) -> list[tuple[Any, ...]]:
    return sorted((r["id"], r["output"], r["parsed"], r["score"], r["error"]) for r in records(run_dir))


@pytest.mark.slow
def test_a_ray_run_equals_a_local_one_and_survives_a_killed_worker(tmp_path: Path, cluster: str) -> None:
    env = _env(tmp_path)
    with serve(tmp_path, "--latency", "0.1", "--reply", "yes") as server:
        args = ["run", "-m", "openai:m", "--base-url", server.url, "-b", "toy:big", "-s", "refine", "-c", "6",
                "--no-progress"]
        run = subprocess.Popen([sys.executable, "-m", "structbench", *args, "--executor", "ray", "--ray-address",
                                cluster, "--workers", "2", "--out", "ray"], env=env, cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + patience(180)
        while len(records(tmp_path / "ray")) < 30:
            assert run.poll() is None, run.communicate()[1]
            assert time.monotonic() < deadline
            time.sleep(0.05)
        placed = json.loads((tmp_path / "ray" / "manifest.json").read_text())["workers"]
        assert placed["executor"] == "ray" and placed["address"] == cluster and len(placed["actors"]) == 2
        os.kill(placed["actors"][0]["pid"], signal.SIGKILL)  # a Ray worker process dies mid-run
        out, err = run.communicate(timeout=patience(300))
        assert run.returncode == 0, err
        answered = server.answered()
        # the local side in this process: it needs no process of its own (no kill, one worker)
        local = invoke(*args, "--workers", "1", "--no-cache", "--out", "local", env=env, cwd=tmp_path)
        assert local.returncode == 0, local.stderr
    recs = records(tmp_path / "ray")
    assert len(recs) == 200 and max(Counter(r["id"] for r in recs).values()) == 1  # no duplicate record
    assert len(set(answered)) == 400 and len(answered) - 400 <= 3 * 2  # only the dead worker's calls in flight
    assert outcomes(tmp_path / "ray") == outcomes(tmp_path / "local")
    # the same results; token usage aside (the killed worker's calls in flight were answered twice)
    assert without_usage(tmp_path / "ray") == without_usage(tmp_path / "local")
    assert "| toy | big | refine |" in out


@pytest.mark.slow
def test_a_ray_run_killed_resumes_locally_repeating_no_completed_call(tmp_path: Path, cluster: str) -> None:
    env = _env(tmp_path)
    with serve(tmp_path, "--latency", "0.1", "--reply", "yes") as server:
        args = ["run", "-m", "openai:m", "--base-url", server.url, "-b", "toy:big", "-c", "6", "--no-progress",
                "--out", "r"]
        run = subprocess.Popen([sys.executable, "-m", "structbench", *args, "--executor", "ray", "--ray-address",
                                cluster, "--workers", "2"], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        while len(records(tmp_path / "r")) < 30:
            assert run.poll() is None
            time.sleep(0.05)
        actors = [a["pid"] for a in json.loads((tmp_path / "r" / "manifest.json").read_text())["workers"]["actors"]]
        run.kill()  # kill -9 of the driver: Ray ends its actors too; the run directory and cache are here
        run.wait()
        ended(actors)  # Ray notices that the actors' owner died and ends them
        finished = {r["id"] for r in records(tmp_path / "r")}
        committed = cached_digests(tmp_path / "cache" / "responses.sqlite")
        seen = len(server.answered())
        resumed = subprocess.run([sys.executable, "-m", "structbench", *args, "--workers", "2"], env=env,
                                 cwd=tmp_path, capture_output=True, text=True, timeout=patience(300))
        assert resumed.returncode == 0, resumed.stderr
        answered = server.answered()
    assert 30 <= len(finished) < 200
    assert len({r["id"] for r in records(tmp_path / "r")}) == 200
    assert committed and not committed & set(answered[seen:])  # no completed call was made again
    # Repeats are only calls whose answers never reached the cache: in flight when the driver died, or sent
    # by an actor in the moments before Ray ended it.
    assert len(set(answered)) == 200 and len(answered) - 200 <= 3 * 6
