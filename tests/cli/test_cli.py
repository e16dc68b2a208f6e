"""The ``structbench`` command as a user runs it: subprocesses, exit codes, files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from structbench.testing.openai_server import request_digest

TESTS = Path(__file__).resolve().parents[1]


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(TESTS),
        STRUCTBENCH_PLUGINS="toybench",
        STRUCTBENCH_CACHE=str(tmp_path / "cache"),
        OPENAI_API_KEY="sk-never-in-any-file",
    )
    return env


def sb(tmp_path: Path, *args: str, check: int | None = 0) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "structbench", *args],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        cwd=tmp_path,
        timeout=300,
    )
    if check is not None:
        assert proc.returncode == check, proc.stderr + proc.stdout
    return proc


def test_list_shows_benchmarks_and_backends(tmp_path: Path) -> None:
    out = sb(tmp_path, "list").stdout
    assert "toy" in out and "direct" in out and "accuracy" in out
    assert "openai" in out and "llamacpp" in out and "oracle" in out


def test_run_oracle_then_report(tmp_path: Path) -> None:
    proc = sb(tmp_path, "run", "--model", "oracle", "--bench", "toy", "--strategy", "all", "--out", "r")
    assert "| toy | small | vote | oracle | accuracy | 1.0000 | [1.0000, 1.0000] | 40 | 0 |" in proc.stdout
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert {r["strategy"] for r in metrics["results"]} == {"direct", "vote", "refine"}
    assert all(r["headline"] == {"name": "accuracy", "value": 1.0, "ci_low": 1.0, "ci_high": 1.0, "confidence": 0.95}
               for r in metrics["results"])
    report = sb(tmp_path, "report", "r").stdout
    assert "## toy:small / refine / oracle" in report and "### by rows" in report


def test_export_then_score(tmp_path: Path) -> None:
    sb(tmp_path, "export", "toy", "--out", "e.jsonl", "--limit", "10")
    lines = [json.loads(x) for x in (tmp_path / "e.jsonl").read_text().splitlines()]
    assert len(lines) == 10
    assert {"id", "benchmark", "variant", "prompt", "gold", "meta"} <= set(lines[0])
    assert lines[0]["prompt"][0]["role"] == "user" and "Does the number" in lines[0]["prompt"][0]["content"]
    preds = [{"id": x["id"], "output": x["gold"]["label"]} for x in lines[:8]]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    proc = sb(tmp_path, "score", "toy", "--predictions", "p.jsonl", "--limit", "10", "--out", "m.json")
    result = json.loads((tmp_path / "m.json").read_text())["results"][0]
    assert result["headline"]["value"] == pytest.approx(0.8)
    assert result["missing"] == [lines[8]["id"], lines[9]["id"]]
    assert "2 sample(s) missing" in proc.stderr


def test_score_rejects_unknown_ids_and_bad_lines(tmp_path: Path) -> None:
    (tmp_path / "p.jsonl").write_text('{"id": "toy-0", "output": "yes"}\n{"id": "nope", "output": "no"}\n')
    proc = sb(tmp_path, "score", "toy", "--predictions", "p.jsonl", check=2)
    assert "not in toy:small" in proc.stderr and "'nope'" in proc.stderr
    (tmp_path / "q.jsonl").write_text('{"id": "toy-0", "output": "yes"}\n{"id": "toy-1"\n')
    proc = sb(tmp_path, "score", "toy", "--predictions", "q.jsonl", check=2)
    assert "q.jsonl:2: not JSON" in proc.stderr


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert "no strategy 'x'" in sb(tmp_path, "run", "-m", "oracle", "-b", "toy", "-s", "x", check=2).stderr
    assert "no selected benchmark" in sb(tmp_path, "run", "-m", "oracle", "-b", "toy", "-o", "k=v", check=2).stderr
    assert "unknown backend" in sb(tmp_path, "run", "-m", "gpt", "-b", "toy", check=2).stderr
    assert not (tmp_path / "runs").exists()


def test_resume_refuses_flags_that_would_change_the_run(tmp_path: Path) -> None:
    sb(tmp_path, "run", "-m", "oracle", "-b", "toy", "-n", "5", "-o", "size=30", "--out", "r")
    before = (tmp_path / "r" / "metrics.json").read_text()
    err = sb(tmp_path, "run", "--resume", "r", "-n", "7", "-m", "mock:x.json", check=2).stderr
    assert "--model, --limit would change it" in err
    assert "--option" in sb(tmp_path, "run", "--resume", "r", "-o", "size=20", check=2).stderr
    assert "--out" in sb(tmp_path, "run", "--resume", "r", "--out", "elsewhere", check=2).stderr
    assert (tmp_path / "r" / "metrics.json").read_text() == before
    # The same flags as the run's own, and execution settings, are fine.
    sb(tmp_path, "run", "--resume", "r", "-m", "oracle", "-b", "toy", "-n", "5", "-o", "size=30", "--out", "r",
       "--concurrency", "2", "--timeout", "30")
    assert json.loads((tmp_path / "r" / "metrics.json").read_text())["results"][0]["n"] == 5


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    log = tmp_path / "requests.log"
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [sys.executable, "-m", "structbench.testing.openai_server", "--latency", "0.05", "--reply", "yes",
         "--log", str(log), "--port-file", str(port_file)],
        stdout=subprocess.DEVNULL,
    )
    for _ in range(200):
        if port_file.exists():
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port_file.read_text()}/v1", log
    proc.kill()
    proc.wait()


def _answered(log: Path) -> list[str]:
    return [line.split()[0] for line in log.read_text().splitlines()]


def _records(run_dir: Path) -> list[dict[str, object]]:
    path = run_dir / "samples.jsonl"
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.endswith("}")]


def test_kill_9_and_resume_repeats_no_completed_request(tmp_path: Path, server: tuple[str, Path]) -> None:
    url, log = server
    args = ["run", "-m", "openai:mock-model", "--base-url", url, "-b", "toy:big", "-s", "refine",
            "-c", "4", "--out", "r", "--no-progress"]
    env = _env(tmp_path)
    kills = 0
    for delay in (1.0, 1.5, 1.2):
        proc = subprocess.Popen([sys.executable, "-m", "structbench", *args], env=env, cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
        done = {d for r in _records(tmp_path / "r") for d in _digests(r)}
        seen_before = len(_answered(log))
        # Nothing answered for a finished sample may be asked again later.
        proc = subprocess.Popen([sys.executable, "-m", "structbench", *args], env=env, cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.6)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        after = _answered(log)[seen_before:]
        assert not done & set(after)
    assert kills >= 2
    sb(tmp_path, *args)
    records = _records(tmp_path / "r")
    assert len({r["id"] for r in records}) == 200
    answered = _answered(log)
    # Each sample makes two distinct requests; repeats are only calls that were in flight at a kill.
    assert len(answered) - len(set(answered)) <= 6 * 4 * 2
    assert len(set(answered)) == 400
    sb(tmp_path, *args[:-3], "-c", "8", "--out", "fresh", "--no-cache", "--no-progress")
    resumed = json.loads((tmp_path / "r" / "metrics.json").read_text())
    fresh = json.loads((tmp_path / "fresh" / "metrics.json").read_text())
    assert resumed == fresh
    for path in (tmp_path / "r").iterdir():
        assert "sk-never-in-any-file" not in path.read_text()
    assert "sk-never-in-any-file" not in (tmp_path / "cache" / "responses.sqlite").read_bytes().decode("latin-1")


def _digests(record: dict[str, object]) -> set[str]:
    """Digests of the requests a finished refine record made: the first turn and the follow-up."""
    prompt = record["prompt"]
    assert isinstance(prompt, list)
    follow = [*prompt, {"role": "assistant", "content": "yes"},
              {"role": "user", "content": "Check your answer. Answer yes or no."}]
    return {request_digest({"messages": prompt}), request_digest({"messages": follow})}
