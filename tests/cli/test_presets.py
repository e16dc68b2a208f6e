"""``--preset`` and per-benchmark strategies as a user runs them (the command in this process)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import papertoy  # noqa: F401  (registers it in this process, as STRUCTBENCH_PLUGINS does in a child)
import toybench  # noqa: F401  (registers it in this process, as STRUCTBENCH_PLUGINS does in a child)
from faults import child_pythonpath
from structbench.testing.cli import Invocation, invoke

TESTS = Path(__file__).resolve().parents[1]
"""A child process imports this checkout's structbench (not another one installed) and the test plugins."""


def sb(tmp_path: Path, *args: str, check: int | None = 0) -> Invocation:
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_PLUGINS="toybench,papertoy",
               STRUCTBENCH_CACHE=str(tmp_path / "cache"), COLUMNS="250")
    proc = invoke(*args, env=env, cwd=tmp_path)
    if check is not None:
        assert proc.returncode == check, proc.stderr + proc.stdout
    return proc


def test_list_shows_the_presets(tmp_path: Path) -> None:
    out = sb(tmp_path, "list").stdout
    for name in ("structfact-table1", "structfact-table3", "scitab-table4", "skabench-table3", "skabench-table5",
                 "structext-table3", "structext-table4", "rfqa-table2", "rfqa-table4", "papertoy-table1"):
        assert name in out
    assert "SciTab Table 4" in out and "scitab:2class/pot" in out


def test_a_preset_runs_its_table_and_the_report_places_it(tmp_path: Path) -> None:
    sb(tmp_path, "run", "--model", "oracle", "--preset", "structext-table4", "--limit", "8", "--no-cache", "--out", "p")
    results = json.loads((tmp_path / "p" / "metrics.json").read_text())["results"]
    assert {(r["benchmark"], r["variant"], r["strategy"]) for r in results} == {
        ("structext", "hard", s) for s in ("naive", "rule_hint", "few_shot", "simple_few_shot")
    }
    # the preset scores as the released scorer did: the rouge package's own F for a perfect match, 0.999999995
    assert all(r["n"] == 8 and abs(r["headline"]["value"] - 1.0) < 1e-6 for r in results)
    config = json.loads((tmp_path / "p" / "manifest.json").read_text())["config"]
    assert config["options"] == {"shots": "3", "scorer": "released"} and config["limit"] == 8
    report = sb(tmp_path, "report", "p", "--resamples", "50").stdout
    assert "### StrucText-Eval Table 4" in report
    assert "| **oracle** | **100.0 [100.0, 100.0]** | **100.0 [100.0, 100.0]** |" in report
    # the same preset resumes; another one would change the run
    sb(tmp_path, "run", "--resume", "p", "--preset", "structext-table4", "--limit", "8", "--no-cache")
    err = sb(tmp_path, "run", "--resume", "p", "--preset", "structext-table6", "--no-cache", check=2).stderr
    assert "--preset" in err


def test_preset_usage_errors(tmp_path: Path) -> None:
    err = sb(tmp_path, "run", "--model", "oracle", "--preset", "scitab-tabel4", check=2).stderr
    assert err.startswith("error: unknown preset 'scitab-tabel4'") and "scitab-table4" in err
    err = sb(tmp_path, "run", "--model", "oracle", "--preset", "structext-table4", "--bench", "toy", check=2).stderr
    assert "drop --bench and --strategy" in err
    err = sb(tmp_path, "run", "--model", "oracle", "--preset", "structext-table4", "-o", "shots=5", check=2).stderr
    assert "runs the paper's shots=3" in err
    assert not (tmp_path / "runs").exists()


def test_strategies_for_one_benchmark(tmp_path: Path) -> None:
    sb(tmp_path, "run", "--model", "oracle", "-b", "toy,toy:big", "-s", "direct,toy:big/vote", "--out", "q")
    results = json.loads((tmp_path / "q" / "metrics.json").read_text())["results"]
    assert sorted((r["variant"], r["strategy"]) for r in results) == [("big", "direct"), ("big", "vote"),
                                                                      ("small", "direct")]
    err = sb(tmp_path, "run", "--model", "oracle", "-b", "toy", "-s", "direct,toylabels/vote", check=2).stderr
    assert "toylabels is not part of this run" in err
