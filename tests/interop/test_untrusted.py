"""Run directories and logs are untrusted input: a name read from a file never names a file outside ``--out``, an
Inspect log of the wrong shape is one line (exit 2), and a log that would inflate to gigabytes is refused unread."""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from extras import require_extra
from structbench.core.errors import ExitCode
from structbench.testing.cli import invoke

require_extra("inspect_ai", "inspect")

from inspect_ai.log import EvalLog, read_eval_log, write_eval_log  # noqa: E402

from structbench.runfiles.inspect_schema import ATTEMPT, RECORD, RESULT  # noqa: E402


def sb(cwd: Path, *args: str) -> Any:
    return invoke(*args, env=dict(os.environ, STRUCTBENCH_CACHE=str(cwd / "cache")), cwd=cwd)


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    done = sb(tmp_path, "run", "-m", "oracle", "-b", "structext:test", "-n", "3", "--out", "run", "--no-progress")
    assert done.returncode == 0, done.stderr
    return tmp_path / "run"


def _rename_strategy(run: Path, name: str) -> None:
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["results"][0]["strategy"] = name
    (run / "metrics.json").write_text(json.dumps(metrics))
    lines = [dict(json.loads(line), strategy=name) for line in (run / "samples.jsonl").read_text().splitlines()]
    (run / "samples.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.mark.parametrize("to", ["lm-eval", "inspect"])
def test_a_name_read_from_a_run_never_names_a_file_outside_out(run_dir: Path, tmp_path: Path, to: str) -> None:
    _rename_strategy(run_dir, "../../../escaped")
    work = tmp_path / "deep" / "er"
    work.mkdir(parents=True)
    proc = sb(work, "convert", str(run_dir), "--to", to, "--out", "out")
    assert proc.returncode == ExitCode.USAGE and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr == (f"error: {run_dir}/metrics.json: result 1: strategy '../../../escaped' cannot name a file "
                           "(it holds a path separator); not a name structbench writes\n")
    assert not [p for p in tmp_path.rglob("*escaped*")]


def _set(path: tuple[str, ...], value: Any) -> Callable[[EvalLog], None]:
    def change(log: EvalLog) -> None:
        target: Any = log
        for part in path[:-1]:
            target = target[part] if isinstance(target, dict) else getattr(target, part)
        if isinstance(target, dict):
            target[path[-1]] = value
        else:
            setattr(target, path[-1], value)
    return change


def _sample(change: Callable[[Any], None]) -> Callable[[EvalLog], None]:
    def each(log: EvalLog) -> None:
        for sample in log.samples or []:
            change(sample)
    return each


SHAPES: dict[str, Callable[[EvalLog], None]] = {
    "run-not-a-mapping": _set(("eval", "metadata", "run"), "runs/x"),
    "options-a-list": lambda log: (log.eval.metadata.pop("run"),  # type: ignore[union-attr]
                                   _set(("eval", "metadata", "options"), ["a"])(log)),
    "result-of-the-wrong-shape": _set(("results", "metadata", RESULT), {"benchmark": 5}),
    "record-a-number": _sample(lambda s: s.metadata.__setitem__(RECORD, 7)),
    "scored-a-string": _sample(lambda s: s.scores["structext"].metadata.__setitem__("scored", "text")),
    "attempt-a-string": _sample(lambda s: s.store.__setitem__(ATTEMPT, "x")),
    "manifest-of-the-wrong-shape": lambda log: log.eval.metadata["run"].__setitem__(  # type: ignore[index]
        "manifest", {"config": 5}),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_log_whose_structbench_metadata_has_the_wrong_shape_is_one_line(run_dir: Path, tmp_path: Path,
                                                                          shape: str) -> None:
    assert sb(tmp_path, "convert", str(run_dir), "--to", "inspect", "--out", "logs").returncode == 0
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    SHAPES[shape](log)
    write_eval_log(log, str(path))
    proc = sb(tmp_path, "report", "logs", "--out", "report.html")
    assert proc.returncode == ExitCode.USAGE, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"error: {path.relative_to(tmp_path)}: ")


def test_a_log_that_inflates_past_the_limit_is_refused_unread(tmp_path: Path) -> None:
    from structbench.core.untrusted import MAX_MEMBER_BYTES

    bomb = tmp_path / "logs" / "bomb.eval"
    bomb.parent.mkdir()
    chunk = b" " * 2**20
    with (zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive,
          archive.open("header.json", "w", force_zip64=True) as member):  # about a megabyte on disk
        for _ in range(MAX_MEMBER_BYTES // len(chunk) + 1):
            member.write(chunk)
    assert bomb.stat().st_size < 2 * 2**20
    proc = sb(tmp_path, "report", "logs", "--out", "report.html")
    assert proc.returncode == ExitCode.USAGE and "Traceback" not in proc.stderr
    assert f"error: logs/bomb.eval: its member 'header.json' inflates to {MAX_MEMBER_BYTES + 2**20:,} bytes" \
        in proc.stderr
