"""The ``structbench`` command as a user runs it: exit codes, files. Commands run in this process
(``structbench.testing.cli.invoke``); a real subprocess where only one shows it (kill -9, a plugin module)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import toybench  # noqa: F401  (registers it in this process, as STRUCTBENCH_PLUGINS does in a child)
from faults import child_pythonpath
from patience import patience
from structbench.testing.cli import Invocation, invoke
from structbench.testing.openai_server import request_digest

TESTS = Path(__file__).resolve().parents[1]
"""A child process imports this checkout's structbench (not another one installed) and the test plugins."""


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=child_pythonpath(),
        STRUCTBENCH_PLUGINS="toybench",
        STRUCTBENCH_CACHE=str(tmp_path / "cache"),
        OPENAI_API_KEY="sk-never-in-any-file",
    )
    return env


def sb(tmp_path: Path, *args: str, check: int | None = 0) -> Invocation:
    proc = invoke(*args, env=_env(tmp_path), cwd=tmp_path)
    if check is not None:
        assert proc.returncode == check, proc.stderr + proc.stdout
    return proc


def test_list_shows_benchmarks_and_backends(tmp_path: Path) -> None:
    out = sb(tmp_path, "list").stdout
    assert "toy" in out and "direct" in out and "accuracy" in out
    assert "openai" in out and "llamacpp" in out and "oracle" in out


def test_output_whose_reader_went_away_exits_141_quietly(tmp_path: Path) -> None:
    """``structbench list | head -1``: the reader closes the pipe; the command ends as one killed by SIGPIPE would
    (141, nothing printed), not with 1, the code of a bug, which typer gives a broken pipe."""
    read, write = os.pipe()
    os.close(read)  # before the command writes a line: its first write meets the closed pipe
    try:
        proc = subprocess.run([sys.executable, "-m", "structbench", "list"], stdout=write, stderr=subprocess.PIPE,
                              env=_env(tmp_path), cwd=tmp_path, text=True, timeout=120)
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr) == (141, "")


def test_run_oracle_then_report(tmp_path: Path) -> None:
    proc = sb(tmp_path, "run", "--model", "oracle", "--bench", "toy", "--strategy", "all", "--out", "r")
    row = "| toy | small | vote | oracle | accuracy | 1.0000 | [1.0000, 1.0000] | 40 samples | 40 | 0 | 0 |"
    assert row in proc.stdout
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert {r["strategy"] for r in metrics["results"]} == {"direct", "vote", "refine"}
    assert all(r["headline"] == {"name": "accuracy", "value": 1.0, "ci_low": 1.0, "ci_high": 1.0, "confidence": 0.95,
                                 "se": 0.0, "unit": "sample", "clusters": 40, "resamples": 1000, "seed": 0,
                                 "method": "mean"}
               for r in metrics["results"])
    report = sb(tmp_path, "report", "r").stdout
    assert "## toy:small / refine / oracle" in report and "### by rows" in report


def _answers(lines: list[dict[str, object]], keep: int | None = None) -> str:
    """Prediction lines as another harness writes them: the export line's id, fingerprint and settings, and an
    output (the gold label)."""
    picked = lines[:keep] if keep is not None else lines
    keys = ("id", "fingerprint", "exported_with")
    return "".join(json.dumps({k: x[k] for k in keys} | {"output": x["gold"]["label"]}) + "\n"  # type: ignore[index]
                   for x in picked)


def test_export_then_score(tmp_path: Path) -> None:
    sb(tmp_path, "export", "toy", "--out", "e.jsonl", "--limit", "10")
    lines = [json.loads(x) for x in (tmp_path / "e.jsonl").read_text().splitlines()]
    assert len(lines) == 10
    assert {"id", "fingerprint", "benchmark", "variant", "prompt", "gold", "meta", "exported_with"} <= set(lines[0])
    assert lines[0]["prompt"][0]["role"] == "user" and "Does the number" in lines[0]["prompt"][0]["content"]
    assert lines[0]["exported_with"] == {"bench": "toy:small", "strategy": "direct", "seed": 0, "limit": 10,
                                         "options": {}}
    (tmp_path / "p.jsonl").write_text(_answers(lines, 8))
    proc = sb(tmp_path, "score", "toy", "--predictions", "p.jsonl", "--limit", "10", "--out", "m.json")
    result = json.loads((tmp_path / "m.json").read_text())["results"][0]
    assert result["headline"]["value"] == pytest.approx(0.8)
    assert result["missing"] == [lines[8]["id"], lines[9]["id"]]
    assert proc.stderr.splitlines()[-1] == "wrote m.json"  # as every command that writes a file says
    assert "2 sample(s) missing" in proc.stderr
    # The export file itself, with an output added to each line, is a predictions file too.
    full = [{**x, "output": x["gold"]["label"]} for x in lines]
    (tmp_path / "f.jsonl").write_text("".join(json.dumps(x) + "\n" for x in full))
    proc = sb(tmp_path, "score", "toy", "--predictions", "f.jsonl", "--limit", "10", "--out", "f.json")
    assert json.loads((tmp_path / "f.json").read_text())["results"][0]["headline"]["value"] == 1.0


def test_score_against_other_settings_is_refused_naming_the_export_settings(tmp_path: Path) -> None:
    """Equal ids under another seed are other samples: a careless score is refused, never silently wrong."""
    sb(tmp_path, "export", "toy", "--out", "e.jsonl", "--seed", "7", "--limit", "10")
    lines = [json.loads(x) for x in (tmp_path / "e.jsonl").read_text().splitlines()]
    (tmp_path / "p.jsonl").write_text(_answers(lines))
    err = sb(tmp_path, "score", "toy", "--predictions", "p.jsonl", "--limit", "10", "--out", "m.json",
             check=2).stderr
    assert err.startswith("error: p.jsonl:") and len(err.strip().splitlines()) == 1
    assert "were exported for other samples than toy:small has under these settings" in err
    assert "score with `toy:small --strategy direct --seed 7 --limit 10`" in err
    assert not (tmp_path / "m.json").exists()
    # With only id, fingerprint and output (no exported_with), the message names the flags to check.
    bare = "".join(json.dumps({k: x[k] for k in ("id", "fingerprint")} | {"output": "yes"}) + "\n" for x in lines)
    (tmp_path / "b.jsonl").write_text(bare)
    err = sb(tmp_path, "score", "toy", "--predictions", "b.jsonl", "--limit", "10", check=2).stderr
    assert "--strategy, --seed, --limit, --option and --data-dir as the export" in err
    # An option that changes the prompt (same ids, same gold) is caught too; the same settings score correctly.
    err = sb(tmp_path, "score", "toy", "--predictions", "p.jsonl", "--limit", "10", "--seed", "7",
             "-o", "serialization=json", check=2).stderr
    assert "exported for other samples" in err and "--seed 7 --limit 10`" in err
    sb(tmp_path, "score", "toy", "--predictions", "p.jsonl", "--limit", "10", "--seed", "7", "--out", "m.json")
    assert json.loads((tmp_path / "m.json").read_text())["results"][0]["headline"]["value"] == 1.0


def test_score_needs_fingerprints_unless_told_not_to(tmp_path: Path) -> None:
    (tmp_path / "p.jsonl").write_text('{"id": "toy-0", "output": "yes"}\n')
    err = sb(tmp_path, "score", "toy", "--predictions", "p.jsonl", check=2).stderr
    assert "p.jsonl:1: no 'fingerprint': copy it from the export line" in err and "--unchecked" in err
    sb(tmp_path, "score", "toy", "--predictions", "p.jsonl", "--unchecked", "--limit", "1", "--out", "m.json")
    assert json.loads((tmp_path / "m.json").read_text())["results"][0]["n"] == 1


def test_score_rejects_unknown_ids_and_bad_lines(tmp_path: Path) -> None:
    (tmp_path / "p.jsonl").write_text('{"id": "toy-0", "output": "yes"}\n{"id": "nope", "output": "no"}\n')
    proc = sb(tmp_path, "score", "toy", "--predictions", "p.jsonl", check=2)
    assert "not in toy:small" in proc.stderr and "'nope'" in proc.stderr
    (tmp_path / "q.jsonl").write_text('{"id": "toy-0", "output": "yes"}\n{"id": "toy-1"\n')
    proc = sb(tmp_path, "score", "toy", "--predictions", "q.jsonl", check=2)
    assert "q.jsonl:2: not JSON" in proc.stderr


def test_failed_samples_exit_3_with_a_summary_and_the_same_command_retries_them(tmp_path: Path) -> None:
    rules = {"rules": [{"match": "number 1", "reply": "yes"}], "default": "no"}
    (tmp_path / "m.json").write_text(json.dumps(rules))
    env_args = ("run", "-m", "mock:m.json", "-b", "toy", "-n", "12", "--out", "r", "--no-progress")
    proc = sb(tmp_path, *env_args, "-o", "toy.size=12", "--strategy", "direct", check=0)
    assert "harness errors" in proc.stdout and proc.stderr == ""
    # A scorer bug (an option value the scorer cannot handle) on every sample: exit 3, counted as harness errors.
    (tmp_path / "bug.py").write_text(
        "from toybench import ToyBench\n"
        "from structbench.benchmarks import BENCHMARKS\n"
        "class Bug(ToyBench):\n"
        "    name = 'bug'\n"
        "    def score(self, sample, attempt, strategy):\n"
        "        if sample.id.endswith(('1', '2')):\n"
        "            raise ValueError('cannot parse ' + sample.id)\n"
        "        return super().score(sample, attempt, strategy)\n"
        "BENCHMARKS.register('bug', Bug)\n"
    )
    env = _env(tmp_path)
    env.update(PYTHONPATH=f"{TESTS}:{TESTS.parent / 'src'}:{tmp_path}", STRUCTBENCH_PLUGINS="toybench,bug")
    args = [sys.executable, "-m", "structbench", "run", "-m", "oracle", "-b", "bug", "-n", "12", "--out", "b",
            "--no-progress"]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=patience(300))
    assert proc.returncode == 3, proc.stderr
    assert "| bug | small | direct | oracle | accuracy | 1.0000 | [1.0000, 1.0000] | 9 samples | 9 | 0 | 3 | – |" in (
        proc.stdout)
    lines = proc.stderr.strip().splitlines()
    assert lines[0] == ("3 samples of 12 failed: 3 harness errors (a bug in a strategy, parser or scorer; "
                        "not scored, left out of the metrics).")
    assert lines[1] == "first error (harness, bug:small/direct/toy-1): scoring failed: ValueError: cannot parse toy-1"
    assert "running the same command again retries exactly the failed samples" in lines[2]
    metrics = json.loads((tmp_path / "b" / "metrics.json").read_text())["results"][0]
    assert (metrics["n"], metrics["errors"], metrics["harness_errors"]) == (9, 0, 3)
    # A model error (the server fails every call; one refusing connections would stop the run at once, exit 4) is
    # counted apart, scored as wrong, and also exits 3.
    from faults import serve

    with serve(tmp_path, "--fail-every", "1", "--fail-status", "500") as server:
        proc = sb(tmp_path, "run", "-m", "openai:m", "--base-url", server.url, "-b", "toy", "-n", "2",
                  "--max-retries", "0", "--timeout", "2", "--out", "o", "--no-progress", check=3)
    assert "2 samples of 2 failed: 2 model errors (a model call failed after all retries; scored as wrong)." in (
        proc.stderr)
    assert "| toy | small | direct | openai:m | accuracy | 0.0000 | [0.0000, 0.0000] | 2 samples | 2 | 2 | 0 | – |" in (
        proc.stdout)


def test_limit_zero_or_negative_is_refused(tmp_path: Path) -> None:
    for limit in ("0", "-1"):
        for command in (["run", "-m", "oracle", "-b", "toy"], ["export", "toy", "--out", "e.jsonl"],
                        ["score", "toy", "--predictions", "p.jsonl"]):
            (tmp_path / "p.jsonl").write_text('{"id": "toy-0", "output": "yes"}\n')
            err = sb(tmp_path, *command, "--limit", limit, check=2).stderr
            assert err == f"error: --limit {limit}: give a number of samples of at least 1 (or leave --limit out " \
                          "for all)\n"
    assert not (tmp_path / "runs").exists() and not (tmp_path / "e.jsonl").exists()


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


def _kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool], timeout: float = 120.0) -> bool:
    """SIGKILL ``proc`` as soon as ``ready()`` holds; True when it was still running then (a real interruption)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None and not ready():
        time.sleep(0.01)
    running = proc.poll() is None
    if running:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return running


def test_kill_9_and_resume_repeats_no_completed_request(tmp_path: Path, server: tuple[str, Path]) -> None:
    url, log = server
    run_dir = tmp_path / "r"
    args = ["run", "-m", "openai:mock-model", "--base-url", url, "-b", "toy:big", "-s", "refine",
            "-c", "4", "--out", "r", "--no-progress"]
    env = _env(tmp_path)

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-m", "structbench", *args], env=env, cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    for _ in range(3):
        before = len(_records(run_dir))
        # Killed mid-run: after it finished some samples of its own, with most of the work outstanding.
        assert _kill_when(start(), lambda before=before: len(_records(run_dir)) >= before + 10)
        finished = len(_records(run_dir))
        assert before + 10 <= finished < 200, finished
        done = {d for r in _records(run_dir) for d in _digests(r)}
        seen_before = len(_answered(log))
        # The next session, killed once it has sent new requests: none may be for a finished sample.
        assert _kill_when(start(), lambda seen=seen_before: len(_answered(log)) >= seen + 8)
        after = _answered(log)[seen_before:]
        assert len(after) >= 8 and not done & set(after)
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
    # the same results; the usage says which calls the resumed run answered from the cache after a kill
    usage = resumed.pop("usage"), fresh.pop("usage")
    for r in (*resumed["results"], *fresh["results"]):
        r.pop("usage")
    assert resumed == fresh
    assert usage[0]["usage"]["calls"] + usage[0]["reused"]["calls"] == usage[1]["usage"]["calls"] == 400
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


def _one_error(proc: Invocation) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_paths_the_file_system_refuses_are_one_line(tmp_path: Path) -> None:
    """An --out name over 255 bytes, a samples.jsonl that is a directory: exit 2 naming the path, no traceback.
    A model name over 255 bytes still gets a default run directory (cut, made unique by a hash)."""
    long = "x" * 300
    line = _one_error(sb(tmp_path, "run", "-m", "oracle", "-b", "toy", "--out", f"runs/{long}", check=None))
    assert line.startswith("error: --out runs/xxx") and "is 300 bytes; a file name may have at most 255" in line
    (tmp_path / "bad" / "samples.jsonl").mkdir(parents=True)
    line = _one_error(sb(tmp_path, "run", "-m", "oracle", "-b", "toy", "--out", "bad", check=None))
    assert line == "error: bad/samples.jsonl: a directory, not a regular file; not read"
    sb(tmp_path, "run", "-m", f"oracle:{long}", "-b", "toy", "--no-progress")
    (made,) = (tmp_path / "runs").iterdir()
    assert len(made.name.encode()) == 255 and made.name.startswith("oracle-xxx") and (made / "metrics.json").exists()


def test_a_data_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    claims = tmp_path / "data" / "scitab" / "dataset" / "sci_tab.json"
    claims.parent.mkdir(parents=True)
    claims.write_bytes(b'[{"id": "a",\n "claim": "caf\xe9"}]')
    proc = sb(tmp_path, "run", "-m", "oracle", "-b", "scitab", "--data-dir", "data", "--allow-modified-data",
              "--out", "r", check=None)
    assert _one_error(proc) == (f"error: {Path('data/scitab/dataset/sci_tab.json')}:2: not UTF-8 text (byte 0xe9 at "
                                "offset 27: invalid continuation byte)")


@pytest.mark.parametrize("args", [["--out", ""], ["--out", " "], ["-b", ""], ["-b", ",,,"]],
                         ids=["out-empty", "out-blank", "bench-empty", "bench-commas"])
def test_empty_values_are_refused(tmp_path: Path, args: list[str]) -> None:
    base = ["run", "-m", "oracle", "--no-progress"]
    base += ["-b", "toy"] if "-b" not in args else ["--out", "r"]
    line = _one_error(sb(tmp_path, *base, *args, check=None))
    assert ("--out" in line and "empty" in line) or "names no benchmark" in line, line
    assert not (tmp_path / "manifest.json").exists() and not (tmp_path / "samples.jsonl").exists()
    assert not (tmp_path / "r").exists()


def test_a_command_builds_only_its_own_click_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """Typer reads the annotations of every registered command each time the app is called (40-60 ms of each start,
    issue 44): ``structbench run`` builds ``run`` alone, the bare ``--help`` all of them to list them."""
    import typer.main

    built: list[str | None] = []
    build = typer.main.get_command_from_info

    def counting(*args: Any, **kwargs: Any) -> Any:
        info = kwargs.get("command_info", args[0] if args else None)
        built.append(info.name)
        return build(*args, **kwargs)

    monkeypatch.setattr(typer.main, "get_command_from_info", counting)
    assert invoke("run", "--help").returncode == 0
    assert built == ["run"]
    built.clear()
    assert invoke("--help").returncode == 0
    assert {"run", "list", "report", "view"} <= set(built)


def test_every_command_and_subcommand_shows_its_help() -> None:
    """Each ``--help`` renders (rich reads the help texts as markup: ``rfqa[/<dataset>[/<db>]]`` was a closing tag
    that matched none, and ``structbench generate structfact --help`` crashed)."""
    import typer.main

    from structbench.cli.app import app

    def paths(command: Any, prefix: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        yield prefix
        for name, sub in getattr(command, "commands", {}).items():  # a group (typer's own click)
            yield from paths(sub, (*prefix, name))

    every = list(paths(typer.main.get_command(app), ()))
    assert ("generate", "structfact") in every and ("run",) in every
    for path in every:
        proc = invoke(*path, "--help", env=dict(os.environ, COLUMNS="120"))
        assert proc.returncode == 0 and "Usage" in proc.stdout, (path, proc.stderr[-500:])


def test_ctrl_c_that_duckdb_took_is_an_interruption_not_a_crash(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    """DuckDB stops its query at Ctrl-C and raises ``RuntimeError: Query interrupted`` instead of KeyboardInterrupt:
    ``generate skabench`` interrupted while it read its tables printed a traceback."""
    from structbench.tools import skabench_build

    def interrupted(*args: Any, **kwargs: Any) -> int:
        raise RuntimeError("Query interrupted")

    monkeypatch.setattr(skabench_build, "write_set", interrupted)
    (tmp_path / "t.csv").write_text("a,b\n1,2\n")
    done = invoke("generate", "skabench", "--csv", str(tmp_path), "--out", str(tmp_path / "s.jsonl"))
    assert (done.returncode, done.stderr.strip()) == (130, "interrupted (Ctrl-C)")
    monkeypatch.setattr(skabench_build, "write_set", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("other")))
    assert invoke("generate", "skabench", "--csv", str(tmp_path), "--out", str(tmp_path / "s.jsonl")).returncode == 1
