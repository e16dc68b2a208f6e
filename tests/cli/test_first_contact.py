"""What a new user meets first: the list, messages for common mistakes, progress in logs, Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import toybench  # noqa: F401  (registers it in this process, as STRUCTBENCH_PLUGINS does in a child)
from faults import child_pythonpath, send_sigint
from patience import patience
from structbench.benchmarks import BENCHMARKS
from structbench.testing.cli import Invocation, invoke

TESTS = Path(__file__).resolve().parents[1]
"""A child process imports this checkout's structbench (not another one installed) and the test plugins."""


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_PLUGINS="toybench",
               STRUCTBENCH_CACHE=str(tmp_path / "cache"))
    env.pop("STRUCTBENCH_DATA_DIR", None)
    env.update(extra)
    return env


def sb(tmp_path: Path, *args: str, **env: str) -> Invocation:
    """``structbench ARGS`` in this process; the tests of a terminal and of Ctrl-C run a real one."""
    return invoke(*args, env=_env(tmp_path, **env), cwd=tmp_path)


def test_list_keeps_every_name_whole_at_any_width(tmp_path: Path) -> None:
    """A real process: in this one, benchmarks other tests registered (their own names and help) would be listed."""
    for width in ("40", "80", "200"):
        proc = subprocess.run([sys.executable, "-m", "structbench", "list"], capture_output=True, text=True,
                              env=_env(tmp_path, COLUMNS=width), cwd=tmp_path, timeout=patience(120))
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


def test_output_paths_that_cannot_be_files_are_one_line_and_links_are_written_through(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    assert sb(tmp_path, "run", "-m", "oracle", "-b", "toy", "-n", "3", "--out", "r").returncode == 0
    assert sb(tmp_path, "export", "toy", "--out", "e.jsonl", "-n", "3").returncode == 0
    lines = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(x | {"output": "yes"}) + "\n" for x in lines))
    for args in (["export", "toy", "--out", "f/x.jsonl", "-n", "3"],
                 ["score", "toy", "-p", "p.jsonl", "-n", "3", "--out", "f/m.json"],
                 ["score", "toy", "-p", "p.jsonl", "-n", "3", "--samples", "f/s.jsonl"],
                 ["compare", "r", "r", "--out", "f/c.json"]):
        proc = sb(tmp_path, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        out = next(a for a in args if a.startswith("f/"))
        assert proc.stderr.strip().splitlines()[-1] == f"error: {out}: cannot be written: f is a file, not a folder"
        assert "Traceback" not in proc.stderr
    (tmp_path / "link.jsonl").symlink_to("real.jsonl")
    assert sb(tmp_path, "export", "toy", "--out", "link.jsonl", "-n", "3").returncode == 0
    assert (tmp_path / "link.jsonl").is_symlink() and len((tmp_path / "real.jsonl").read_text().splitlines()) == 3


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
    deadline = time.monotonic() + patience(300)
    while not manifest.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    time.sleep(4)  # the model is loaded and generating (40 replies of up to 400 tokens take minutes)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    send_sigint(proc)
    _, err = proc.communicate(timeout=patience(120))
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


def test_a_bad_flag_value_or_an_unknown_flag_is_one_line(tmp_path: Path) -> None:
    """typer's own errors (a value out of range, a flag that does not exist) read as every other usage error: one line,
    exit 2, never a framed box."""
    cases = {
        ("run", "--concurrency", "0"): "error: invalid value for '--concurrency' / '-c': Input should be greater than",
        ("run", "--bogus"): "error: no such option: --bogus",
        ("run", "--max-tokens", "x"): "error: invalid value for '--max-tokens': Input should be a valid integer",
        ("nosuch",): "error: no such command 'nosuch'",
    }
    for args, says in cases.items():
        proc = sb(tmp_path, *args)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, (args, proc.stderr)
        assert lines[0].startswith(says) and lines[0].endswith("--help'"), (args, lines[0])
        assert "╭" not in proc.stderr and "Usage:" not in proc.stderr and proc.stdout == ""
    assert sb(tmp_path, "--help").returncode == 0


def test_a_seed_no_server_takes_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """With several epochs the run's seed is each request's: past 64 bits every sample would fail as a harness
    error (the JSON encoder refuses it), and running again would fail the same way."""
    for seed in (str(2**64), str(2**63), str(-(2**63) - 1)):
        proc = sb(tmp_path, "run", "-m", "oracle", "-b", "toy", "-n", "2", "--epochs", "2", "--seed", seed,
                  "--out", "s")
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert "--seed" in proc.stderr and not (tmp_path / "s").exists()
    assert sb(tmp_path, "run", "-m", "oracle", "-b", "toy", "-n", "2", "--epochs", "2", "--seed", str(2**63 - 2),
              "--out", "s").returncode == 0


def test_an_openai_model_without_base_url_is_told_what_is_probably_missing(tmp_path: Path) -> None:
    env = {k: v for k, v in _env(tmp_path).items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    proc = invoke("run", "-m", "openai:Qwen/Qwen2.5-7B-Instruct", "-n", "1", "--out", "r", env=env, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "error: api.openai.com needs an API key: set the environment variable OPENAI_API_KEY; no --base-url was "
        "given, so openai:Qwen/Qwen2.5-7B-Instruct goes to api.openai.com: for a server of your own (vLLM, SGLang, "
        "llama.cpp), add --base-url http://HOST:PORT/v1")
    given = invoke("run", "-m", "openai:gpt-4o", "--base-url", "https://api.openai.com/v1", "-n", "1", "--out", "r",
                   env=env, cwd=tmp_path)
    assert given.returncode == 2 and given.stderr.strip().endswith("set the environment variable OPENAI_API_KEY")


def test_a_misspelt_benchmark_in_a_suite_file_gets_a_did_you_mean(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text("models:\n  - model: oracle\nbenchmarks: [structfactt]\n")
    proc = sb(tmp_path, "run", "suite.yaml")
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error: suite.yaml:3: benchmarks[0].bench: unknown benchmark 'structfactt'. "
                                          "Did you mean: structfact")


def _on_a_terminal(tmp_path: Path, columns: int, *args: str) -> tuple[int, str]:
    """``structbench ARGS`` with its stdout on a pseudo-terminal ``columns`` wide, as a user's shell runs it: the exit
    status and what the terminal showed (colours removed)."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in _env(tmp_path).items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen([sys.executable, "-m", "structbench", *args], stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the command closed its end
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert proc.wait(timeout=patience(600)) is not None and proc.stderr is not None
    proc.stderr.close()
    return proc.returncode, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode()).replace("\r", "")


@pytest.mark.parametrize("columns", [80, 120, 240])
def test_the_results_table_reads_whole_on_a_terminal_of_any_width(tmp_path: Path, columns: int) -> None:
    """On a terminal, benchmark, variant, strategy, metric, value and interval read whole at 80 columns (the other
    columns under the table), and the whole table is one where it fits; nothing is cut with an ellipsis."""
    (tmp_path / "yes.json").write_text(json.dumps({"rules": [], "default": "A"}))
    code, shown = _on_a_terminal(tmp_path, columns, "run", "-m", "mock:yes.json", "--no-progress", "--out", "r")
    assert code == 0, shown
    result = json.loads((tmp_path / "r" / "metrics.json").read_text())["results"][0]
    h = result["headline"]
    words = next(line for line in shown.splitlines() if line.startswith("structfact ")).split()
    assert words[:3] == ["structfact", "generated", "few_shot"]
    assert all(w in words for w in ("weighted_f1", f"{h['value']:.4f}", f"[{h['ci_low']:.4f},", f"{h['ci_high']:.4f}]",
                                    "30")), words
    table = shown.split("What ran:")[0]
    assert "…" not in shown and max(len(line) for line in table.splitlines()) <= columns
    baselines = ", ".join(f"{name} {value:.4f}" for name, value in result["baselines"].items())
    assert baselines in " ".join(shown.split())  # the columns left out of the row are said under it
    assert ("harness errors: 0" in " ".join(shown.split())) == (columns < 240)


def test_help_keeps_bracketed_words_rich_would_take_for_styles(tmp_path: Path) -> None:
    """``pip install 'structbench[mlflow]'`` in a help text reads whole in ``--help`` (Rich drops ``[mlflow]``)."""
    import typer.main

    from structbench.cli.app import app

    root = typer.main.get_command(app)
    checked = 0
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        for sub, leaf in getattr(command, "commands", {name: command}).items():
            words = [w for p in leaf.params for w in re.findall(r"\[[A-Za-z][\w-]*\]", p.help or "")]
            if not words:
                continue
            path = [name] if sub == name else [name, sub]
            shown = " ".join(sb(tmp_path, *path, "--help", COLUMNS="400").stdout.split())
            for word in words:
                assert word in shown, (path, word)
                checked += 1
    assert checked >= 5  # run's --executor and --log-to, log's --to, embedded-model's --serve ...
