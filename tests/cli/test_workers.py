"""``structbench run --workers N`` as a user meets it: kill -9 of the run or of a worker, signals, replicas."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psutil
import pytest

from faults import child_pythonpath, closed_port, read_only, send_sigint, serve
from patience import patience
from structbench.testing.cli import Invocation, invoke
from structbench.testing.openai_server import request_digest

TESTS = Path(__file__).resolve().parents[1]
CHILD_PATH = f"{TESTS.parent / 'src'}{os.pathsep}{TESTS}"
"""A child process imports this checkout's structbench (not another one installed) and the test plugins."""
KEY = "key-Wq52-never-in-any-file"


def _env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_PLUGINS="toybench",
                STRUCTBENCH_CACHE=str(tmp_path / "cache"), OPENAI_API_KEY=KEY)


def sb(tmp_path: Path, *args: str) -> Invocation:
    """``structbench ARGS`` run to its end in this process (``testing.cli.invoke``); its workers are processes."""
    proc = invoke(*args, env=_env(tmp_path), cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "structbench", *args], env=_env(tmp_path), cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def records(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "samples.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.endswith("}")] if path.exists() else []


def metrics(run_dir: Path) -> dict[str, Any]:
    """The run's results, without their token usage (a resumed run reused some answers that one run made)."""
    data = dict(json.loads((run_dir / "metrics.json").read_text()))
    data.pop("usage", None)
    for result in data["results"]:
        result.pop("usage", None)
    return data


def children(pid: int) -> list[int]:
    """Processes whose parent is ``pid``."""
    return [child.pid for child in psutil.Process(pid).children()]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_for(ready: Any, proc: subprocess.Popen[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline
        time.sleep(0.01)


def refine_digests(record: dict[str, Any]) -> set[str]:
    prompt = record["prompt"]
    follow = [*prompt, {"role": "assistant", "content": "yes"},
              {"role": "user", "content": "Check your answer. Answer yes or no."}]
    return {request_digest({"messages": prompt}), request_digest({"messages": follow})}


ARGS = ["-m", "openai:m", "-b", "toy:big", "-s", "refine", "-c", "8", "--workers", "2", "--no-progress"]


def test_kill_9_of_the_run_stops_its_workers_and_resume_repeats_no_completed_call(tmp_path: Path) -> None:
    with serve(tmp_path, "--latency", "0.05", "--reply", "yes") as server:
        args = ["run", *ARGS, "--base-url", server.url, "--out", "r"]
        for _ in range(2):
            before = len(records(tmp_path / "r"))
            proc = start(tmp_path, *args)
            wait_for(lambda before=before: len(records(tmp_path / "r")) >= before + 20, proc)
            workers = children(proc.pid)
            assert len(workers) == 2  # the forked workers
            proc.kill()
            proc.wait()
            deadline = time.monotonic() + patience(10)
            while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not any(alive(pid) for pid in workers)  # they died with the run
            done = {d for r in records(tmp_path / "r") for d in refine_digests(r)}
            seen = len(server.answered())
            time.sleep(0.3)  # anything in flight at the kill is answered now
            seen_after = len(server.answered())
            # The next session sends no request for a finished sample.
            proc = start(tmp_path, *args)
            wait_for(lambda seen=seen_after: len(server.answered()) >= seen + 8, proc)
            proc.kill()
            proc.wait()
            assert not done & set(server.answered()[seen_after:])
            assert seen <= seen_after
        proc = start(tmp_path, *args)
        _, err = proc.communicate(timeout=patience(300))
        assert proc.returncode == 0, err
        answered = server.answered()
        fresh = sb(tmp_path, "run", *ARGS, "--workers", "1", "--base-url", server.url, "--out", "fresh", "--no-cache")
        assert fresh.returncode == 0, fresh.stderr
    recs = records(tmp_path / "r")
    assert len(recs) == len({r["id"] for r in recs}) == 200  # no duplicate record
    assert len(set(answered)) == 400
    assert len(answered) - len(set(answered)) <= 4 * 8 * 2  # only calls in flight at a kill were sent again
    assert metrics(tmp_path / "fresh") == metrics(tmp_path / "r")  # the same results as one uninterrupted process
    assert all(KEY not in p.read_text() for p in (tmp_path / "r").iterdir())


def test_a_killed_worker_hands_its_samples_to_the_others(tmp_path: Path) -> None:
    with serve(tmp_path, "--latency", "0.05", "--reply", "yes") as server:
        args = ["run", *ARGS, "-c", "6", "--workers", "3", "--base-url", server.url, "--out", "r"]
        proc = start(tmp_path, *args)
        wait_for(lambda: len(records(tmp_path / "r")) >= 20, proc)
        victim = children(proc.pid)[0]
        os.kill(victim, signal.SIGKILL)
        out, err = proc.communicate(timeout=patience(300))
        answered = server.answered()
    assert proc.returncode == 0, err
    assert f"(pid {victim}) was killed by signal 9 (SIGKILL); its " in err
    assert "unfinished samples go to the other workers" in err
    recs = records(tmp_path / "r")
    assert len(recs) == 200 and max(Counter(r["id"] for r in recs).values()) == 1
    assert all(r["error"] is None for r in recs) and "| toy | big | refine |" in out
    assert len(set(answered)) == 400 and len(answered) - 400 <= 2 * 2  # only its calls in flight
    assert not any(alive(pid) for pid in children(os.getpid()) if pid == victim)


def test_sigterm_stops_every_worker_with_143(tmp_path: Path) -> None:
    with serve(tmp_path, "--latency", "0.2", "--reply", "yes") as server:
        args = ["run", *ARGS, "--base-url", server.url, "--out", "r"]
        proc = start(tmp_path, *args)
        wait_for(lambda: len(server.answered()) >= 10, proc)
        workers = children(proc.pid)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=patience(60))
        assert proc.returncode == 143, err
        assert err.strip().splitlines()[-1] == \
            "terminated (SIGTERM); finished samples are saved in r, the same command resumes"
        assert not any(alive(pid) for pid in workers)
        manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
        assert manifest["status"] == "interrupted" and manifest["workers"] == 2
        assert sb(tmp_path, *args).returncode == 0
    assert len({r["id"] for r in records(tmp_path / "r")}) == 200


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_counts_its_workers_model_calls(tmp_path: Path, sig: signal.Signals) -> None:
    """Stopped by a signal, a --workers 2 run still records the model calls its workers made: the driver has them
    stop and report before it writes the manifest (it recorded 0 where the server had answered ~56)."""
    with serve(tmp_path, "--latency", "0.2", "--reply", "yes") as server:
        proc = start(tmp_path, "run", *ARGS, "--base-url", server.url, "--out", "r", "--no-cache")
        wait_for(lambda: len(records(tmp_path / "r")) >= 10, proc)
        if sig == signal.SIGINT:
            send_sigint(proc)
        else:
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=patience(60))
        assert proc.returncode == (130 if sig == signal.SIGINT else 143), err
        time.sleep(0.5)  # the server answers (and logs) what was in flight
        answered = len(server.answered())
    session = json.loads((tmp_path / "r" / "manifest.json").read_text())["sessions"][-1]
    done = sum(r["calls"] - r["cached_calls"] for r in records(tmp_path / "r"))
    assert 10 <= done <= session["model_calls"] <= answered  # no more than in flight (8) were lost at the signal
    assert answered - session["model_calls"] <= 8, (answered, session)


def test_a_sessions_spending_counts_its_workers_calls(tmp_path: Path) -> None:
    """The manifest's ``sessions[].spent`` (calls, tokens, cost) of a --workers 2 run is what the workers' calls
    spent, as the run's usage counts it (it recorded 0 where the server had answered every call)."""
    (tmp_path / "prices.yaml").write_text("m: {input: 1, output: 2}\n")
    usage = '{"prompt_tokens": 100, "completion_tokens": 42, "total_tokens": 142}'
    with serve(tmp_path, "--reply", "yes", "--usage", usage) as server:
        proc = sb(tmp_path, "run", *ARGS, "--limit", "40", "--base-url", server.url, "--out", "r", "--prices",
                  "prices.yaml")
        assert proc.returncode == 0, proc.stderr
        answered = len(server.answered())
    session = json.loads((tmp_path / "r" / "manifest.json").read_text())["sessions"][-1]
    made = json.loads((tmp_path / "r" / "metrics.json").read_text())["usage"]["usage"]
    assert session["spent"]["calls"] == session["model_calls"] == made["calls"] == answered > 40
    assert session["spent"]["tokens"] == 142 * answered
    assert session["spent"]["cost_usd"] == pytest.approx(answered * (100 + 2 * 42) / 1e6)


def test_every_call_failing_stops_all_workers_with_4(tmp_path: Path) -> None:
    t0 = time.perf_counter()
    with closed_port() as port:
        proc = sb(tmp_path, "run", *ARGS, "--base-url", f"http://127.0.0.1:{port}/v1", "--max-retries", "1",
                  "--out", "r")
    assert time.perf_counter() - t0 < patience(60)
    assert proc.returncode == 4, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("error: stopped at once: nothing answers there (http://127.0.0.1:")
    assert json.loads((tmp_path / "r" / "manifest.json").read_text())["status"] == "stopped"
    assert len(records(tmp_path / "r")) < 60


def test_a_read_only_cache_stops_all_workers_keeping_every_answer(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "responses.sqlite"
    with serve(tmp_path, "--reply", "yes", "--latency", "0.02") as server:
        base = ["run", *ARGS, "-s", "direct", "-c", "4", "--base-url", server.url]
        assert sb(tmp_path, *base, "-n", "2", "--out", "warm").returncode == 0  # the cache exists
        with read_only(cache):
            proc = sb(tmp_path, *base, "-n", "60", "--out", "r")
            assert proc.returncode == 5, proc.stderr
            line = proc.stderr.strip().splitlines()[-1]
            assert "cannot be written: attempt to write a readonly database" in line
            assert "are kept in r/unsaved-responses.jsonl" in line
            paid = set(server.answered()[2:])
            spilled = (tmp_path / "r" / "unsaved-responses.jsonl").read_text().splitlines()
            kept = {request_digest({"messages": json.loads(json.loads(x)["request"])["messages_or_prompt"]})
                    for x in spilled}
            assert paid and kept == paid and len(spilled) == len(paid)  # every paid answer, kept once
            recs = records(tmp_path / "r")
            assert all(r["error"] is None for r in recs) and len(recs) == len(paid) + 2 < 60  # both stopped
        before = len(server.answered())
        assert sb(tmp_path, *base, "-n", "60", "--out", "r").returncode == 0
        again = set(server.answered()[before:])
    assert not again & paid  # a kept answer is never asked for again
    assert len({r["id"] for r in records(tmp_path / "r")}) == 60


def test_two_replicas_one_failing(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with serve(tmp_path / "a", "--latency", "0.05", "--reply", "yes") as good, \
            serve(tmp_path / "b", "--fail-every", "1", "--fail-status", "503") as bad:
        urls = f"{good.url},{bad.url}"
        t0 = time.perf_counter()
        proc = sb(tmp_path, "run", *ARGS, "--base-url", urls, "--out", "r")
        seconds = time.perf_counter() - t0
        answered = good.answered()
    assert proc.returncode == 0, proc.stderr
    recs = records(tmp_path / "r")
    assert len(recs) == 200 and all(r["error"] is None and r["output"] == "yes" for r in recs)
    assert len(answered) == len(set(answered)) == 400  # every call answered once, by the good replica
    assert seconds < patience(60)  # the failing replica was retried elsewhere at once, not backed off each time
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["backend"]["base_url"] == ",".join(sorted([good.url, bad.url]))
    # The cache identity is the set of replicas: the same run against them in another order is all hits.
    again = sb(tmp_path, "run", *ARGS, "--base-url", f"{bad.url},{good.url}", "--out", "again")
    assert again.returncode == 0
    session = json.loads((tmp_path / "again" / "manifest.json").read_text())["sessions"][0]
    assert session["model_calls"] == 0 and session["cache_hits"] == 400


def test_the_last_progress_line_has_no_call_in_flight(tmp_path: Path) -> None:
    """Each worker reports its calls' counters every half second; the last report comes as it ends, so a finished
    run's progress never says a call is still in flight (it said "1 call in flight" at 25/25)."""
    with serve(tmp_path, "--latency", "0.05", "--reply", "yes") as server:
        proc = sb(tmp_path, "run", *[a for a in ARGS if a != "--no-progress"], "-n", "24", "--base-url", server.url,
                  "--out", "r", "--progress-every", "0.1")
    assert proc.returncode == 0, proc.stderr
    last = [line for line in proc.stderr.splitlines() if line.startswith("evaluating:")][-1]
    assert last.startswith("evaluating: 24/24 samples (100%)") and "in flight" not in last, last
