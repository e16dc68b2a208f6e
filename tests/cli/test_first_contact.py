"""What a new user meets first: the list, messages for common mistakes, progress in logs, Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faults import child_pythonpath
from structbench.benchmarks import BENCHMARKS

TESTS = Path(__file__).resolve().parents[1]
"""A child process imports this checkout's structbench (not another one installed) and the test plugins."""


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_PLUGINS="toybench",
               STRUCTBENCH_CACHE=str(tmp_path / "cache"))
    env.pop("STRUCTBENCH_DATA_DIR", None)
    env.update(extra)
    return env


def sb(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "structbench", *args], capture_output=True, text=True,
                          env=_env(tmp_path, **env), cwd=tmp_path, timeout=600)


def test_list_keeps_every_name_whole_at_any_width(tmp_path: Path) -> None:
    for width in ("40", "80", "200"):
        proc = sb(tmp_path, "list", COLUMNS=width)
        assert proc.returncode == 0, proc.stderr
        words = set(re.findall(r"[A-Za-z0-9_]+", proc.stdout))
        for name in BENCHMARKS.names():
            bench = BENCHMARKS.get(name)()
            names = [*bench.strategies(), *type(bench).Options.model_fields, *type(bench).variants]
            assert not [n for n in names if n not in words], (width, name)
        assert "…" not in proc.stdout
        assert all(len(line) <= int(width) for line in proc.stdout.splitlines() if " " in line.strip())


def test_bench_all_means_every_benchmark(tmp_path: Path, every_dataset: Path) -> None:
    proc = sb(tmp_path, "run", "-m", "oracle", "-b", "all,toy", "-n", "2", "--no-cache", "--out", "r",
              "--data-dir", str(every_dataset))
    assert proc.returncode == 0, proc.stderr
    benches = json.loads((tmp_path / "r" / "manifest.json").read_text())["config"]["benches"]
    assert {"rfqa", "scitab", "skabench", "structext", "structfact", "toy"} <= set(benches)  # plugins count too
    assert len(benches) == len(set(benches))  # toy, named twice, runs once
    results = json.loads((tmp_path / "r" / "metrics.json").read_text())["results"]
    assert sorted(r["benchmark"] for r in results) == sorted(benches)


def test_messages_for_common_mistakes(tmp_path: Path) -> None:
    missing = sb(tmp_path, "report", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and missing.stderr.strip() == f"error: {tmp_path / 'nowhere'}: no such run directory"
    (tmp_path / "empty").mkdir()
    assert "not a structbench run directory" in sb(tmp_path, "report", str(tmp_path / "empty")).stderr
    no_data = sb(tmp_path, "run", "-m", "oracle", "-b", "scitab", "--data-dir", str(tmp_path / "nope"), "--out", "d")
    assert no_data.returncode == 2
    assert no_data.stderr.strip().endswith(f"{tmp_path / 'nope'}: no such directory")
    assert not (tmp_path / "d").exists()
    bad_option = sb(tmp_path, "run", "-m", "oracle", "-b", "toy", "-M", "n_ctx=4", "--out", "o")
    assert bad_option.returncode == 2 and "not an option of the oracle backend" in bad_option.stderr


def test_predictions_files_with_a_bom_or_another_encoding(tmp_path: Path) -> None:
    export = sb(tmp_path, "export", "toy", "--out", "toy.jsonl", "-n", "3")
    assert export.returncode == 0, export.stderr
    exported = [json.loads(line) for line in (tmp_path / "toy.jsonl").read_text().splitlines()]
    keys = ("id", "fingerprint", "exported_with")
    lines = [json.dumps({k: x[k] for k in keys} | {"output": "yés"}, ensure_ascii=False) for x in exported]
    (tmp_path / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode())
    scored = sb(tmp_path, "score", "toy", "-p", "bom.jsonl", "-n", "3")
    assert scored.returncode == 0, scored.stderr
    assert "missing" not in scored.stderr
    (tmp_path / "latin1.jsonl").write_bytes("\n".join(lines).encode("latin-1"))
    refused = sb(tmp_path, "score", "toy", "-p", "latin1.jsonl", "-n", "3")
    assert refused.returncode == 2
    assert refused.stderr.strip().startswith("error: latin1.jsonl:1: not UTF-8")
    assert "Traceback" not in refused.stderr


def test_progress_lines_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    proc = sb(tmp_path, "run", "-m", "oracle", "-b", "toy", "--out", "p", "--progress-every", "0.2", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("evaluating:")]
    assert lines[0].startswith("evaluating: 0/40 samples (0%)")
    assert lines[-1].startswith("evaluating: 40/40 samples (100%)") and lines[-1].endswith("0 errors")
    quiet = sb(tmp_path, "run", "-m", "oracle", "-b", "toy", "--out", "q", "--no-progress", "--no-cache")
    assert "evaluating" not in quiet.stderr


@pytest.mark.slow
def test_ctrl_c_during_an_embedded_model_run_exits_130_cleanly(tmp_path: Path) -> None:
    """SIGINT while llama.cpp generates: the call stops, the model is freed after it, exit 130 (it segfaulted)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "structbench", "run", "--no-cache", "--no-progress", "--out", "c",
         "-b", "structext:test", "-n", "40", "--max-tokens", "400"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path), cwd=tmp_path,
    )
    manifest = tmp_path / "c" / "manifest.json"
    deadline = time.monotonic() + 300
    while not manifest.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    time.sleep(4)  # the model is loaded and generating (40 replies of up to 400 tokens take minutes)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted; finished samples are saved in c" in err
    state = json.loads(manifest.read_text())
    assert state["status"] == "interrupted"
    samples = tmp_path / "c" / "samples.jsonl"
    assert len(samples.read_text().splitlines() if samples.exists() else []) < 40


def test_the_run_says_what_ran_and_how_to_read_the_score(tmp_path: Path) -> None:
    (tmp_path / "yes.json").write_text(json.dumps({"rules": [], "default": "A"}))  # always option A, "Yes"
    proc = sb(tmp_path, "run", "-m", "mock:yes.json", "--no-progress", "--out", "r")
    assert proc.returncode == 0, proc.stderr
    table, summary = proc.stdout.split("What ran: ", 1)
    summary = " ".join(summary.split())
    assert "| structfact | generated | few_shot |" in table
    assert "on the default quick suite: StructFact's generated variant, 30 claims" in summary
    assert "cannot be told apart from the" in summary and "baseline" in summary
    assert "The model answered YES in 30 of 30 samples (gold: " in summary
    # the single-run report shows the same baselines beside the headline
    assert sb(tmp_path, "report", "r", "--out", "r.html").returncode == 0
    baselines = json.loads((tmp_path / "r" / "metrics.json").read_text())["results"][0]["baselines"]
    shown = ", ".join(f"{name} {value:.4f}" for name, value in baselines.items())
    overview = (tmp_path / "r.md").read_text().split("*Headline metric of every run entry*", 1)[1]
    assert "| baselines |" in overview.split("\n\n")[1].splitlines()[0]
    assert f"| {shown} |" in overview.split("\n\n")[1] and shown in (tmp_path / "r.html").read_text()


def test_list_says_what_each_option_means_and_where_the_embedded_model_is(tmp_path: Path) -> None:
    proc = sb(tmp_path, "list", COLUMNS="100")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "testbed (default noise): Comma list of noise, order, integration, negative" in text
    assert "per_task (default " in text and "max_tokens (default 4096): " in text
    gguf = tmp_path / "cache" / "models" / "gemma-3-270m-q4_k_m.gguf"
    assert f"is assembled on first use into {gguf}" in text and "structbench embedded-model" in text
    printed = sb(tmp_path, "embedded-model")
    assert printed.returncode == 0 and printed.stdout.strip() == str(gguf) and gguf.stat().st_size > 100_000_000


def test_misspelt_names_get_a_did_you_mean(tmp_path: Path) -> None:
    cases = {
        ("-b", "toy", "-s", "dirct"): "toy has no strategy 'dirct'. Did you mean: direct?",
        ("-b", "toy:smal"): "toy has no variant 'smal'. Did you mean: small?",
        ("-b", "tyo"): "unknown benchmark 'tyo'. Did you mean: toy?",
        ("-b", "toy", "-o", "sise=3"): "--option sise: no selected benchmark has this option. Did you mean: size?",
        ("-b", "toy", "-o", "toy.sise=3"): "sise: Extra inputs are not permitted. Did you mean: size?",
        ("-p", "structfact-tabel1"): "unknown preset 'structfact-tabel1'. Did you mean: structfact-table1",
    }
    for args, says in cases.items():
        proc = sb(tmp_path, "run", "-m", "oracle", *args, "--out", "r", "--no-progress")
        assert proc.returncode == 2 and says in proc.stderr, (args, proc.stderr)
    assert not (tmp_path / "r").exists()


def test_help_shows_no_type_for_flags(tmp_path: Path) -> None:
    for command in ([], ["run"], ["report"], ["score"]):
        proc = sb(tmp_path, *command, "--help", COLUMNS="140")
        assert proc.returncode == 0 and "--help" in proc.stdout
        assert "<bool>" not in proc.stdout and "<boolean>" not in proc.stdout.lower()
    assert "<int range>" in sb(tmp_path, "run", "--help", COLUMNS="140").stdout  # other options keep theirs
