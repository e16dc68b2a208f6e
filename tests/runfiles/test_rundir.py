"""The one reader of a run directory: current records as columns per entry, full records read back from disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from structbench.core.errors import DataError, UsageError
from structbench.runfiles import rundir
from structbench.runfiles.records import SampleRecord
from structbench.runfiles.results import MetricsFile
from structbench.runfiles.rundir import held_records, read_entries, read_run_files
from structbench.runfiles.runformat import METRICS, SAMPLES


def record(sample_id: str, **fields: Any) -> SampleRecord:
    base: dict[str, Any] = {"benchmark": "toy", "variant": "small", "strategy": "all", "model": "m", "id": sample_id,
                            "task": "lookup", "prompt": f"what is {sample_id}?", "output": f"reply to {sample_id}",
                            "parsed": "yes", "gold": "yes", "score": 1.0, "meta": {"size": "big"}, "cluster": "t1"}
    return SampleRecord.model_validate({**base, **fields})


def write(path: Path, records: list[SampleRecord], tail: bytes = b"") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / SAMPLES).write_bytes(b"".join(r.model_dump_json().encode() + b"\n" for r in records) + tail)
    (path / METRICS).write_text(MetricsFile(results=[]).model_dump_json(), encoding="utf-8")
    return path


def test_each_entry_holds_the_last_record_of_each_sample_in_id_then_epoch_order(tmp_path: Path) -> None:
    lines = [
        record("b", epoch=1),
        record("b", epoch=0, error="timeout", score=0.0),
        record("a", strategy="cot"),
        record("a"),
        record("b", epoch=0, output="tried again"),  # the retry: the current record of (b, 0)
        record("c", error="boom", error_kind="harness", score=0.0),
    ]
    entries = read_entries(write(tmp_path / "run", lines))
    assert list(entries) == [("toy", "small", "all", "m", ""), ("toy", "small", "cot", "m", "")]
    mine = entries[("toy", "small", "all", "m", "")]
    assert [(r.id, r.epoch) for r in mine] == [("a", 0), ("b", 0), ("b", 1), ("c", 0)]
    assert [r.output for r in mine.full()] == ["reply to a", "tried again", "reply to b", "reply to c"]
    assert list(mine.full()) == [lines[3], lines[4], lines[0], lines[5]]  # each read back whole
    assert mine[1].error is None and mine[3].error_kind == "harness" and mine.failures() == 1
    counted = mine.outcomes()
    assert [s.id for s in counted] == ["a", "b", "b"] and [s.meta for s in counted] == [{"size": "big"}] * 3
    assert [r.id for r in mine.counted()] == ["a", "b", "b"]
    assert mine.epochs().tolist() == [0, 0, 1, 0]


def test_prompt_digests_tell_questions_apart(tmp_path: Path) -> None:
    entries = read_entries(write(tmp_path / "run", [record("a"), record("b"), record("c", prompt="what is a?")]))
    digests = next(iter(entries.values())).digests()
    assert digests[0] == digests[2] != digests[1]


def test_a_torn_last_line_is_left_with_a_warning_and_a_broken_line_is_named(tmp_path: Path,
                                                                            caplog: pytest.LogCaptureFixture) -> None:
    whole = write(tmp_path / "whole", [record("a")])
    with caplog.at_level("WARNING"):
        read_entries(whole)
    assert caplog.messages == []
    run = write(tmp_path / "torn", [record("a")], tail=b'{"benchmark": "to')
    with caplog.at_level("WARNING"):
        assert [r.id for e in read_entries(run).values() for r in e] == ["a"]
    assert caplog.messages == [f"warning: {run / SAMPLES}: its last line is incomplete (being written, or torn by a "
                               f"crash) and is left out; where no run is writing it, `structbench run --resume {run}` "
                               "cuts it off and runs that sample again"]
    broken = write(tmp_path / "broken", [record("a")], tail=b'{"not": "a record"}\n')
    with pytest.raises(DataError, match=rf"{SAMPLES}:2: not a sample record"):
        read_entries(broken)


def test_a_finished_file_and_a_followed_one_name_a_garbage_line_alike(tmp_path: Path) -> None:
    """One line reader (``recordlines``): ``report`` stops with exit 2 on the line the view lists and skips."""
    from structbench.runfiles.recordlines import RecordTail
    from structbench.testing.cli import invoke

    run = write(tmp_path / "run", [record("a")], tail=b'{"not": "a record"}\n' + record("b").model_dump_json().encode()
                + b"\n")
    with pytest.raises(DataError) as raised:
        read_entries(run)
    followed = RecordTail(run / SAMPLES).read()
    assert followed.problems == [str(raised.value)] and [r.id for _, r in followed.records] == ["a", "b"]
    assert str(raised.value).startswith(f"{run / SAMPLES}:2: not a sample record: ")
    done = invoke("report", str(run))
    assert done.returncode == 2 and done.stderr.strip() == f"error: {raised.value}"


def test_a_run_directory_reads_whole_or_says_what_it_is_not(tmp_path: Path) -> None:
    run = read_run_files(write(tmp_path / "run", [record("a"), record("b", model="n")]))
    assert run.manifest is None and len(run) == 2 and run.options == {}
    assert [r.id for r in run.records(("toy", "small", "all", "n", ""))] == ["b"]
    assert len(run.records(("toy", "small", "all", "absent", ""))) == 0
    with pytest.raises(UsageError, match="no such run directory"):
        read_run_files(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="not a structbench run directory"):
        read_run_files(tmp_path / "empty")


def test_records_in_memory_read_like_a_run_directory() -> None:
    entries = held_records([record("b"), record("a"), record("b", output="again")])
    mine = next(iter(entries.values()))
    assert [r.output for r in mine.full()] == ["reply to a", "again"]


def test_full_records_are_read_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``full`` parses a record when asked for it, never the whole entry first; the index keeps no full record."""
    run = write(tmp_path / "run", [record(f"s{i:03d}", prompt="x" * 1000) for i in range(200)])
    mine = next(iter(read_entries(run).values()))
    parsed: list[bytes] = []
    real = SampleRecord.model_validate_json

    def counting(line: bytes) -> SampleRecord:
        parsed.append(line)
        return real(line)

    monkeypatch.setattr(rundir.SampleRecord, "model_validate_json", counting)
    reader = mine.full([5, 7])
    assert not parsed
    assert next(reader).id == "s005" and len(parsed) == 1
    assert next(reader).prompt == "x" * 1000 and len(parsed) == 2
