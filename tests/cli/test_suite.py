"""``structbench run suite.yaml`` as a user runs it: two models x three benchmarks, resume, a bad file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import threads
from patience import patience
from structbench.testing.cli import Invocation, invoke

SUITE = """\
models:
  - model: oracle
  - model: mock
    name: echo
    system_prompt: You are careful.
    generation: {max_tokens: 32, temperature: 0.0}
benchmarks:
  - structext:test
  - bench: scitab
    strategies: [zero_shot, cot]
  - bench: structfact
    options: {serialization: markdown}
limit: 4
data_dir: DATA
out: out
"""


def sb(cwd: Path, *args: str) -> Invocation:
    env = dict(os.environ, STRUCTBENCH_CACHE=str(cwd / "cache"))
    return invoke(*args, env=env, cwd=cwd)


@pytest.mark.shared
def test_two_models_three_benchmarks_one_report(tmp_path: Path, shared_datasets: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE.replace("DATA", str(shared_datasets)))
    proc = sb(tmp_path, "run", "suite.yaml", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "| scitab | all | cot | oracle | macro_f1 | 1.0000 |" in proc.stdout
    assert "| structext | test | naive | mock | rougeL | 0.0000 |" in proc.stdout
    out = tmp_path / "out"
    assert {p.name for p in out.iterdir()} >= {"oracle", "echo", "report.html", "report.md"}
    for name, model in (("oracle", "oracle"), ("echo", "mock")):
        results = json.loads((out / name / "metrics.json").read_text())["results"]
        assert {(r["benchmark"], r["strategy"]) for r in results} == {
            ("structext", "naive"), ("scitab", "zero_shot"), ("scitab", "cot"), ("structfact", "zero_shot")}
        assert all(r["model"] == model and r["n"] == 4 for r in results)
    record = json.loads((out / "echo" / "samples.jsonl").read_text().splitlines()[0])
    assert record["prompt"][0] == {"role": "system", "content": "You are careful."}
    report = (out / "report.md").read_text()
    assert "oracle" in report and "mock" in report
    again = sb(tmp_path, "run", "suite.yaml", "--no-progress")  # resumes: nothing left to do, same table
    assert again.returncode == 0 and again.stdout.splitlines()[:14] == proc.stdout.splitlines()[:14]
    manifest = json.loads((out / "echo" / "manifest.json").read_text())
    assert [s["jobs"] for s in manifest["sessions"]] == [16, 0]


@pytest.mark.shared
def test_workers_apply_to_every_model_of_a_suite(tmp_path: Path, shared_datasets: Path) -> None:
    """``--workers`` is an execution setting: it spreads each model's run, and a local model runs in one process
    (forked from this one: with no other thread running here, ``threads.single_threaded``)."""
    threads.single_threaded()
    text = SUITE.replace("DATA", str(shared_datasets)).replace("  - model: oracle\n", "  - model: oracle\n"
                                                              "  - model: llamacpp\n    options: {n_ctx: 4096}\n"
                                                              "    generation: {max_tokens: 8}\n")
    text = text.replace("  - bench: scitab\n    strategies: [zero_shot, cot]\n", "").replace("limit: 4", "limit: 2")
    text = text.replace("  - bench: structfact\n    options: {serialization: markdown}\n", "")
    (tmp_path / "suite.yaml").write_text(text)
    proc = sb(tmp_path, "run", "suite.yaml", "--no-progress", "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    assert "| structext | test | naive | oracle | rougeL | 1.0000 |" in proc.stdout
    assert "note: --workers 2: the llamacpp backend holds its model in this process" in proc.stderr
    workers = {name: json.loads((tmp_path / "out" / name / "manifest.json").read_text())["workers"]
               for name in ("oracle", "llamacpp", "echo")}
    assert workers == {"oracle": 2, "llamacpp": 1, "echo": 2}
    manifest = json.loads((tmp_path / "out" / "llamacpp" / "manifest.json").read_text())
    assert manifest["backend"]["load"]["n_ctx"] == 4096  # the model option reached the backend


def test_a_bad_suite_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE.replace("DATA", "data").replace("    name: echo", "    nmae: echo"))
    proc = sb(tmp_path, "run", "suite.yaml")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: suite.yaml:4: models[1].nmae: unknown key"
    assert not (tmp_path / "out").exists()
    flags = sb(tmp_path, "run", "suite.yaml", "--model", "oracle", "--limit", "3")
    assert flags.returncode == 2 and "--model, --limit cannot be given with a suite file" in flags.stderr
    preset = sb(tmp_path, "run", "suite.yaml", "--preset", "scitab-table4")  # (it was ignored: a suite ran as written)
    assert preset.returncode == 2 and "--preset cannot be given with a suite file" in preset.stderr
    model = sb(tmp_path, "run", "oracle", "--bench", "scitab")  # a model named where a suite file goes
    assert model.returncode == 2
    assert model.stderr.strip() == "error: oracle: no such suite file (a model is named with --model, e.g. `-m oracle`)"


def test_a_suite_whose_prices_miss_a_model_is_refused_before_any_model_runs(tmp_path: Path) -> None:
    """The prices are checked for every model up front: the first model's run is not made, then the second refused."""
    (tmp_path / "suite.yaml").write_text("models:\n  - model: oracle\n  - model: mock\n    name: echo\n"
                                         "benchmarks: [structext:test]\nlimit: 2\nout: out\n"
                                         "prices: {oracle: {input: 0, output: 0}}\n")
    proc = sb(tmp_path, "run", "suite.yaml", "--no-progress")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == ("error: suite.yaml: no price for the model mock (the file prices: oracle); add "
                                   "'mock: {input: USD, output: USD}' (per million tokens)")
    assert not (tmp_path / "out").exists()


def test_a_billion_laughs_suite_is_one_line_not_gigabytes(tmp_path: Path) -> None:
    """735 bytes whose aliases stand for 10**9 values, and a file repeating a key: exit 2 with one line, in seconds
    (the child may not use more than 2 GiB, so a regression fails instead of swapping the machine)."""
    import resource

    levels = ["a: &a [" + ", ".join(['"lol"'] * 9) + "]"]
    levels += [f"{b}: &{b} [" + ", ".join([f"*{a}"] * 9) + "]" for a, b in zip("abcdefgh", "bcdefghi", strict=True)]
    laughs = "models:\n  - model: oracle\n    chat_template_args:\n" + "".join(f"      {x}\n" for x in levels)
    (tmp_path / "laughs.yaml").write_text(laughs + "benchmarks: [scitab]\n")
    (tmp_path / "twice.yaml").write_text("models: [{model: oracle}]\nbenchmarks: [scitab]\nseed: 1\nseed: 2\n")

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    env = dict(os.environ, STRUCTBENCH_CACHE=str(tmp_path / "cache"))
    for name, says in (("laughs.yaml", "laughs.yaml:9: the file stands for more than 100,000 values"),
                       ("twice.yaml", "twice.yaml:4: key 'seed' appears twice in this mapping")):
        proc = subprocess.run([sys.executable, "-m", "structbench", "run", name], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=patience(120), preexec_fn=cap)
        assert proc.returncode == 2 and proc.stderr.startswith(f"error: {says}"), proc.stderr[-500:]
        assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "runs").exists()
