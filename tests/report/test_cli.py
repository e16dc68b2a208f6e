"""``structbench report`` and ``structbench compare`` as a user runs them, and ``compare`` against references."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from faults import child_pythonpath, fifo
from hostile import checked_markdown, hostile_run, no_escapes
from structbench.report.compare import compare_runs
from structbench.report.entries import StatsOptions
from structbench.report.runs import BenchmarkCache, load_run
from structbench.stats import MeanStatistic, paired_test
from structbench.testing.cli import Invocation, invoke

TESTS = Path(__file__).resolve().parents[1]
"""A child process imports this checkout's structbench (not another one installed) and the test plugins."""


def sb(cwd: Path, *args: str, check: int = 0, separate: bool = False) -> Invocation | subprocess.CompletedProcess[str]:
    """``structbench ARGS`` as a user in ``cwd`` runs it: in this process (``testing.cli.invoke``), or in a process of
    its own (``separate``) where what it cannot import matters (``toylabels`` is registered only in this one)."""
    env = dict(os.environ, PYTHONPATH=child_pythonpath(),
               STRUCTBENCH_PLUGINS="toybench", STRUCTBENCH_CACHE=str(cwd / "c"))
    proc = (
        subprocess.run([sys.executable, "-m", "structbench", *args], capture_output=True, text=True, env=env, cwd=cwd,
                       timeout=300)
        if separate else invoke(*args, env=env, cwd=cwd)
    )
    assert proc.returncode == check, proc.stderr + proc.stdout
    return proc


def test_report_command_writes_html_and_markdown(toy_runs: tuple[Path, Path], tmp_path: Path) -> None:
    weak, strong = toy_runs
    proc = sb(
        tmp_path, "report", str(weak), str(strong), "--out", "out/r.html", "--json", "out/r.json",
        "--resamples", "100", "--title", "T", separate=True,
    )
    assert "wrote out/r.html" in proc.stdout and "wrote out/r.md" in proc.stdout
    results = json.loads((tmp_path / "out" / "r.json").read_text())["results"]
    assert len(results) == 12
    first = results[0]
    assert first["interval"]["resamples"] == 100 and first["interval"]["method"] == "mean"
    assert first["metrics"]["accuracy_ci_low"] == first["interval"]["low"] <= first["headline"]["value"]
    md = (tmp_path / "out" / "r.md").read_text()
    assert md.startswith("# T\n")
    # ``toylabels`` is registered only inside the test process: the subprocess shows no interval for its
    # macro-F1 (never the mean score's interval under that name), and says why.
    assert "toylabels could not be loaded" in md
    labels = [r for r in results if r["benchmark"] == "toylabels"]
    assert len(labels) == 4
    assert all(r["interval"] is None and "could not be loaded" in r["no_interval"] for r in labels)
    assert all("macro_f1_ci_low" not in r["metrics"] for r in labels)
    stdout = sb(tmp_path, "report", str(weak), "--resamples", "50").stdout
    assert stdout.startswith("# structbench report:") and "## toy:big — Toy table lookup" in stdout
    assert "![" not in stdout  # no figures on stdout
    err = sb(tmp_path, "report", str(tmp_path), check=2).stderr
    assert "no metrics.json" in err


def test_compare_command_and_json(toy_runs: tuple[Path, Path], tmp_path: Path) -> None:
    weak, strong = toy_runs
    proc = sb(tmp_path, "compare", str(weak), str(strong), "--out", "c.json", "--resamples", "500", "--seed", "3",
              separate=True)
    assert "| toy:small | direct | accuracy | overall |" in proc.stdout
    data = json.loads((tmp_path / "c.json").read_text())
    assert (data["resamples"], data["seed"]) == (500, 3)
    rows = data["comparisons"]
    overall = {(r["benchmark"], r["variant"], r["strategy_a"]): r for r in rows if r["breakdown"] == "overall"}
    assert set(overall) == {(b, v, s) for b, v in [("toy", "small"), ("toy", "big")] for s in ("direct", "vote")}
    # ``toylabels`` is not importable in the subprocess: left out, and said so (no mean score as its macro-F1).
    assert "note: left out toylabels could not be loaded" in proc.stderr
    assert len(data["skipped"]) == 1 and data["skipped"][0].startswith("toylabels could not be loaded")
    # Against a direct computation on the pooled per-sample scores of the two runs.
    a = [json.loads(x) for x in (weak / "samples.jsonl").read_text().splitlines()]
    b = {(r["benchmark"], r["variant"], r["strategy"], r["id"]): r["score"]
         for r in map(json.loads, (strong / "samples.jsonl").read_text().splitlines())}
    mine = sorted(
        (r for r in a if (r["benchmark"], r["variant"], r["strategy"]) == ("toy", "big", "vote")), key=lambda r: r["id"]
    )
    sa = np.array([r["score"] for r in mine])
    sb_ = np.array([b[("toy", "big", "vote", r["id"])] for r in mine])
    ref = paired_test(MeanStatistic(np.concatenate([sa, sb_])), len(sa), resamples=500, seed=3)
    got = overall[("toy", "big", "vote")]
    assert got["n"] == 200 and got["delta"] == pytest.approx(sb_.mean() - sa.mean())
    assert got["p_bootstrap"] == pytest.approx(ref.p_bootstrap)
    assert got["p_randomization"] == pytest.approx(ref.p_randomization)
    assert got["delta"] > 0.25 and got["p_bootstrap"] < 0.01 and got["p_randomization"] < 0.01
    # Per breakdown group: the groups of ``task`` and ``rows`` partition the pairs.
    groups = [r for r in rows if (r["benchmark"], r["variant"], r["strategy_a"]) == ("toy", "big", "vote")]
    assert sum(r["n"] for r in groups if r["breakdown"] == "task") == 200
    assert sum(r["n"] for r in groups if r["breakdown"] == "rows") == 200


def test_compare_a_run_with_itself_across_strategies(toy_runs: tuple[Path, Path], tmp_path: Path) -> None:
    weak = toy_runs[0]
    proc = sb(tmp_path, "compare", str(weak), str(weak), "--strategy-a", "direct", "--strategy-b", "vote")
    assert "| toy:small | direct vs vote | accuracy | overall |  | 40 |" in proc.stdout
    # The noisy oracle answers by sample, so both strategies agree everywhere: no difference at all.
    assert "+0.0000 | [0.0000, 0.0000] | 1.0000 | 1.0000 |" in proc.stdout
    err = sb(tmp_path, "compare", str(weak), str(weak), "--strategy-a", "direct", check=2).stderr
    assert "--strategy-b" in err
    err = sb(tmp_path, "compare", str(weak), str(weak), "--strategy-a", "x", "--strategy-b", "y", check=2).stderr
    assert "share no samples" in err


def test_compare_reaggregates_corpus_metrics(toy_runs: tuple[Path, Path]) -> None:
    """In process (where ``toylabels`` is importable) macro-F1 is recomputed per resample, not averaged."""
    a, b = (load_run(p) for p in toy_runs)
    rows = compare_runs(a, b, stats=StatsOptions(resamples=200), benches=BenchmarkCache())
    labels = [r for r in rows if r.benchmark == "toylabels" and r.breakdown == "overall"]
    assert {r.method for r in labels} == {"aggregate"}
    headline = {e.strategy: e.headline.value for e in a.metrics.results if e.benchmark == "toylabels"}
    for r in labels:
        assert r.metric == "macro_f1" and r.test.a == pytest.approx(headline[r.strategy_a])
    assert {r.method for r in rows if r.benchmark == "toy"} == {"mean"}


def test_compare_at_small_n_warns_and_shows_no_bootstrap_p(run_factory: Callable[..., Path], tmp_path: Path) -> None:
    """n = 3: the bootstrap p of a handful of distinct resamples (``<0.001``) would mislead; it is n/a, with a
    warning that no p-value can go below 2 / 2^3."""
    a = run_factory(tmp_path, "a", accuracy=0.0, benches=("toy",), strategies=("direct",), limit=3)
    b = run_factory(tmp_path, "b", accuracy=1.0, benches=("toy",), strategies=("direct",), limit=3)
    proc = sb(tmp_path, "compare", str(a), str(b), "--out", "c.json")
    overall = next(line for line in proc.stdout.splitlines() if "| overall |" in line)
    assert "| n/a |" in overall and "<0.0010" not in overall
    assert "warning:" in proc.stderr and "fewer than 10 resampled units" in proc.stderr and "0.25" in proc.stderr
    assert (proc.stdout + proc.stderr).count("fewer than 10 resampled units") == 1  # said once, not twice
    row = next(r for r in json.loads((tmp_path / "c.json").read_text())["comparisons"] if r["breakdown"] == "overall")
    assert row["small"] and row["clusters"] == 3 and row["p_randomization"] >= 0.2


def test_compare_notes_runs_whose_programs_ran_under_different_isolation(toy_runs: tuple[Path, Path],
                                                                          tmp_path: Path) -> None:
    """Model-written programs under namespaces in one run and the audit-hook guard alone in the other: a difference
    the comparison did not say (the report says only each run's own); runs that do not name a level are not
    compared on it."""

    def isolated(name: str, source: Path, level: str | None) -> str:
        run = Path(shutil.copytree(source, tmp_path / name))
        manifest = json.loads((run / "manifest.json").read_text())
        if level is not None:
            manifest["sandbox"] = {"isolation": level}
        (run / "manifest.json").write_text(json.dumps(manifest))
        return name

    weak, strong = toy_runs
    caged, guarded = isolated("caged", weak, "namespaces"), isolated("guarded", strong, "off")
    proc = sb(tmp_path, "compare", caged, guarded, "--out", "c.json", "--resamples", "50")
    notes = [line for line in proc.stderr.splitlines() if "sandbox isolation" in line]
    assert notes == [
        "note: the runs' model-written code ran under different sandbox isolation: A (caged) in Linux namespaces "
        "(network, filesystem and processes isolated by the kernel), B (guarded) without namespace isolation "
        "(sandbox=off: audit-hook guard only); part of Δ may be the sandbox's"
    ]
    assert json.loads((tmp_path / "c.json").read_text())["notes"] == [notes[0].removeprefix("note: ")]
    unnamed = isolated("unnamed", strong, None)  # ran no sandboxed program (or predates the field)
    for a, b in ((caged, isolated("caged2", strong, "namespaces")), (caged, unnamed), (unnamed, guarded)):
        quiet = sb(tmp_path, "compare", a, b, "--out", "q.json", "--resamples", "50")
        assert "isolation" not in quiet.stderr
        assert json.loads((tmp_path / "q.json").read_text())["notes"] == []


def test_the_report_shows_the_interval_the_run_stored(toy_runs: tuple[Path, Path], tmp_path: Path) -> None:
    """One computation, stored once in metrics.json: the report shows it (here a marked value written into the
    file), and computes another only when asked for other resamples."""
    run = tmp_path / "weak"
    shutil.copytree(toy_runs[0], run)
    data = json.loads((run / "metrics.json").read_text())
    first = data["results"][0]["headline"]
    assert (first["resamples"], first["seed"], first["confidence"], first["unit"]) == (1000, 0, 0.95, "sample")
    first["ci_low"] = 0.012345
    (run / "metrics.json").write_text(json.dumps(data))
    assert "[0.0123, " in sb(tmp_path, "report", "weak").stdout
    assert "[0.0123, " not in sb(tmp_path, "report", "weak", "--resamples", "300").stdout


def test_compare_pairs_runs_with_epochs(tmp_path: Path) -> None:
    """Runs answered in three epochs pair sample by sample; each side's headline is its mean over epochs, and
    the randomization swaps a sample's epochs together."""
    from structbench.backends.base import Request
    from structbench.backends.mock import MockBackend
    from structbench.data.datasets import DataContext
    from structbench.runfiles.runconfig import RunConfig
    from structbench.runner.run import Run
    from structbench.runner.selection import prepare

    def answer(bias: int) -> Callable[[Request], str]:
        def reply(request: Request) -> str:  # right on some seeds only: a sampling model
            return "yes" if ((request.params.seed or 0) + bias + len(str(request.messages))) % 3 else "no"
        return reply

    runs = []
    for name, bias in (("a", 0), ("b", 1)):
        config = RunConfig(model=name, benches=["toy"], strategies=["direct"], limit=30, epochs=3)
        Run(tmp_path / name, config).execute(MockBackend(reply=answer(bias)), prepare(config, DataContext()),
                                             cache=None, concurrency=4, progress=False)
        runs.append(load_run(tmp_path / name))
    rows = compare_runs(*runs, stats=StatsOptions(resamples=300), benches=BenchmarkCache())
    overall = next(r for r in rows if r.breakdown == "overall")
    heads = [run.metrics.results[0].headline.value for run in runs]
    assert overall.test.n == 30 and (overall.test.a, overall.test.b) == pytest.approx(heads)
    assert 0 < overall.test.p_randomization <= 1 and overall.test.ci_low <= overall.test.delta <= overall.test.ci_high


def test_compare_pairs_only_samples_that_asked_the_same(tmp_path: Path) -> None:
    """A generated benchmark run with another --seed asks other questions under the same ids: ``compare`` pairs
    none of them (as ``report`` ranks none), and says which samples a partial overlap leaves out."""
    for name, args in (("s0", ("--seed", "0", "-n", "6")), ("s1", ("--seed", "1", "-n", "6")),
                       ("few", ("--seed", "0", "-n", "3"))):
        sb(tmp_path, "run", "-m", "oracle", "-b", "structext:test", "--no-progress", "--out", name, *args)
    refused = sb(tmp_path, "compare", "s0", "s1", check=2)
    assert refused.stderr.splitlines()[-1] == ("error: s0 and s1 share no samples (pairs need the same benchmark, "
                                               "variant, strategy and id, and the same prompt and gold)")
    assert "6 share an id but not their prompt or gold (another --seed, --limit or options)" in refused.stderr
    partial = sb(tmp_path, "compare", "few", "s0")
    assert "warning: structext:test / naive: few holds 3 samples and s0 6; compared on the 3 they share" in \
        partial.stderr
    assert "| overall |" in partial.stdout
    assert "holds" not in sb(tmp_path, "compare", "s0", "s0").stderr


def test_a_report_is_written_whole_or_not_at_all(toy_runs: tuple[Path, Path], tmp_path: Path) -> None:
    """``--json`` that cannot be written left the HTML, the Markdown and the figures behind; now none of them."""
    weak, _ = toy_runs
    (tmp_path / "afile").write_text("")
    refused = sb(tmp_path, "report", str(weak), "--out", "rep/r.html", "--json", "afile/x.json", "--resamples", "50",
                 check=2)
    assert refused.stderr.strip().splitlines()[-1] == "error: afile/x.json: cannot be written: afile is a file, " \
                                                      "not a folder"
    assert not (tmp_path / "rep").exists() or not any((tmp_path / "rep").rglob("*"))
    done = sb(tmp_path, "report", str(weak), "--out", "rep/r.html", "--json", "rep/r.json", "--resamples", "50")
    assert "wrote rep/r.html" in done.stdout and (tmp_path / "rep" / "r.json").exists()
    assert sorted(p.name for p in (tmp_path / "rep").iterdir()) == ["r.html", "r.json", "r.md", "r_figures"]
    assert any((tmp_path / "rep" / "r_figures").iterdir())


def test_a_fifo_in_a_run_directory_exits_2_naming_it(toy_runs: tuple[Path, Path], tmp_path: Path) -> None:
    """A FIFO made ``open()`` wait for a writer for good: ``report`` hung, deaf to Ctrl-C."""
    weak, _ = toy_runs
    for name in ("samples.jsonl", "metrics.json", "manifest.json"):
        run = Path(shutil.copytree(weak, tmp_path / name))
        with fifo(run / name) as released:
            err = sb(tmp_path, "report", str(run), "--out", "r.html", check=2).stderr
        assert err.strip().splitlines() == [f"error: {run / name}: a FIFO, not a regular file; not read"]
        assert released == []


def test_report_and_compare_print_no_escape_sequences_from_a_run(tmp_path: Path) -> None:
    """A name holding ``ESC ] 0 ; title BEL`` or an OSC 8 link reached the terminal as it was."""
    run = hostile_run(tmp_path)
    report = sb(tmp_path, "report", str(run))
    no_escapes(report.stdout + report.stderr)
    assert "onerror" in report.stdout  # the name is printed, less its control characters
    compare = sb(tmp_path, "compare", str(run), str(run))
    no_escapes(compare.stdout + compare.stderr)


def test_compare_shows_a_hostile_run_path_as_text(tmp_path: Path) -> None:
    """``compare``'s Markdown wrote the runs' paths as they were: a ``|`` split its line, HTML and links rendered."""
    run = hostile_run(tmp_path)
    named = run.rename(tmp_path / "a|b\n# H <img src=x onerror=alert(1)> `c` [l](javascript:alert(1))")
    out = checked_markdown(sb(tmp_path, "compare", str(named), str(named)).stdout, headings=0)
    assert "<code>" not in out and "a|b # H" in out
