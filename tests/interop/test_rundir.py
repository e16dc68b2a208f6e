"""The run directory as ``convert`` and ``publish`` read it (``interop.rundir``): a run whose ``samples.jsonl`` ends
in a torn line is refused, and converts once ``--resume`` has mended it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from interop_runs import LIMIT, sb, sb_here


@pytest.mark.shared
@pytest.mark.parametrize("to", ["inspect", "lm-eval"])
def test_a_torn_last_line_is_refused_naming_it_and_the_resume_that_mends_it(oracle_run: Path, tmp_path: Path,
                                                                            to: str) -> None:
    """A crash mid-write leaves the last line of ``samples.jsonl`` without its newline. ``convert`` wrote a log of
    the other records under ``metrics.json``'s metrics of all of them (5 samples, ``scored_samples`` 6), with a
    warning the log did not keep; now exit 2 and one line naming the file and line and the resume that mends it,
    nothing written; after that resume the run converts whole."""
    if to == "inspect":
        pytest.importorskip("inspect_ai")
    torn = tmp_path / "torn"
    shutil.copytree(oracle_run, torn)
    records = torn / "samples.jsonl"
    lines = records.read_bytes().splitlines(keepends=True)
    records.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    proc = sb_here(tmp_path, "convert", "torn", "--to", to, "--out", "out", check=2)
    assert proc.stderr.strip().splitlines() == [
        f"error: torn/samples.jsonl:{len(lines)}: the last line is incomplete (torn by a crash, or being written), so "
        "the records are not those metrics.json was computed from; `structbench run --resume torn` cuts it off and "
        "runs that sample again (once no run is writing it), then convert or publish"]
    assert not (tmp_path / "out").exists()

    sb(tmp_path, "run", "--resume", "torn", "--no-progress")
    assert records.read_bytes().endswith(b"\n")
    sb_here(tmp_path, "convert", "torn", "--to", to, "--out", "out")
    if to == "inspect":
        from inspect_ai.log import read_eval_log

        metrics = json.loads((torn / "metrics.json").read_text())["results"]
        logs = [read_eval_log(str(p)) for p in (tmp_path / "out").glob("*.eval")]
        assert len(logs) == len(metrics)
        for log in logs:
            assert log.samples is not None and log.results is not None
            assert len(log.samples) == log.results.scores[0].scored_samples == LIMIT


@pytest.mark.shared
def test_a_run_whose_last_session_did_not_finish_is_refused(oracle_run: Path, tmp_path: Path) -> None:
    """A finished run resumed (its failed samples retried) and killed keeps the earlier session's ``metrics.json``
    beside records the later one added: ``convert`` and ``publish`` wrote those records under the stale metrics. Now
    they refuse it as ``log`` does (exit 2, one line, nothing written), and a run being filled now too."""
    stale = tmp_path / "stale"
    shutil.copytree(oracle_run, stale)
    manifest = json.loads((stale / "manifest.json").read_text())
    manifest["status"] = "running"  # what a session killed with -9 leaves
    (stale / "manifest.json").write_text(json.dumps(manifest))
    for command in (["convert", "stale", "--to", "lm-eval", "--out", "out"], ["publish", "stale", "--out", "out"]):
        proc = sb_here(tmp_path, *command, check=2)
        assert proc.stderr.strip().splitlines() == [
            "error: stale: the run is not finished: its last session was killed before it ended (status running); "
            "`structbench run --resume stale` finishes it, then convert or publish it"]
        assert not (tmp_path / "out").exists()
