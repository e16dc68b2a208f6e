"""A record's summary (``runfiles.records.RecordSummary``) pickled as plain values, unpickled to an equal summary; and
its row (``SummaryRow``), what a worker sends."""

from __future__ import annotations

import io
import pickle
from dataclasses import fields as dataclass_fields
from typing import Any

import pytest

from structbench.backends.usage import CallUsage, Usage
from structbench.runfiles.records import RecordSummary, SampleRecord, SummaryRow, UsageCounts


def record(**fields: Any) -> SampleRecord:
    return SampleRecord.model_validate({
        "benchmark": "toy", "variant": "small", "strategy": "direct", "model": "openai:m", "id": "s1", "task": "t",
        "prompt": None, "output": "", **fields,
    })


CALLS = [
    CallUsage(model="openai:m", prompt_tokens=120, completion_tokens=7),
    CallUsage(model="openai:m", prompt_tokens=80, completion_tokens=None, reasoning_tokens=3, cached_tokens=64),
    CallUsage(model="openai:m", prompt_tokens=120, completion_tokens=7, reused=True),
    CallUsage(model="openai:judge", batch=True),
]

SUMMARIES = [
    record().slim(),
    record(parsed="yes", gold="yes", score=1.0, values={"em": 1.0, "f1": 0.5}, meta={"rows": 3, "tags": ["a", "b"]},
           cluster="c7", epoch=2, cell="temperature=0.7", call_usage=CALLS[:1]).slim(),
    record(parsed={"rows": [[1, None], ["x", 2.5]]}, gold=[["a"]], error="timeout", error_kind="model",
           call_usage=CALLS).slim(),
    record(error="Traceback ...\nKeyError: 'x'", error_kind="harness").slim(),
    record(error="prompt too long", error_kind="context", reasoning_cut_off=True, replies_cut_off=3,
           call_usage=CALLS[1:3]).slim(),
    record(output="", artifacts={"trace": []}, error="turn limit", error_kind="turns", call_usage=CALLS[3:]).slim(),
]


class Globals(pickle.Unpickler):
    """An unpickler that notes every class or function the pickle names."""

    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))
        self.named: list[tuple[str, str]] = []

    def find_class(self, module: str, name: str) -> Any:
        self.named.append((module, name))
        return super().find_class(module, name)


@pytest.mark.parametrize("summary", SUMMARIES)
def test_a_summary_pickles_to_an_equal_one(summary: RecordSummary) -> None:
    for protocol in (pickle.DEFAULT_PROTOCOL, pickle.HIGHEST_PROTOCOL):
        back = pickle.loads(pickle.dumps(summary, protocol=protocol))
        assert back == summary
        assert back.usage_by() == summary.usage_by() and back.key == summary.key and back.counted == summary.counted
        assert [type(usage) for _, usage in back.usage_groups] == [type(usage) for _, usage in summary.usage_groups]


def test_the_usage_groups_survive_the_trip() -> None:
    back = pickle.loads(pickle.dumps(SUMMARIES[2]))
    groups = dict(back.usage_groups)
    assert set(groups) == {("openai:m", False, False), ("openai:m", False, True), ("openai:judge", True, False)}
    made = groups["openai:m", False, False]
    assert (made.calls, made.prompt_tokens, made.completion_tokens, made.reasoning_tokens, made.cached_tokens,
            made.unknown) == (2, 200, 7, 3, 64, 1)
    assert made.total_tokens == 207 and not made.complete


def test_a_summary_pickles_as_plain_values() -> None:
    """No pydantic model nor dataclass state in the pickle: one function rebuilds the summary from plain values
    (unpickling each record the workers send is on the run's request path, #44)."""
    data = pickle.dumps(SUMMARIES[2], protocol=pickle.HIGHEST_PROTOCOL)
    unpickler = Globals(data)
    assert unpickler.load() == SUMMARIES[2]
    assert len(unpickler.named) == 1, unpickler.named
    assert unpickler.named[0][0] == "structbench.runfiles.records"


RECORDS = [
    record(),
    record(parsed={"rows": [[1, None], ["x", 2.5]]}, gold=[["a"]], values={"em": 1.0}, meta={"rows": 3}, cluster="c7",
           epoch=2, cell="temperature=0.7", error="timeout", error_kind="model", call_usage=CALLS),
    record(error="prompt too long", error_kind="context", reasoning_cut_off=True, replies_cut_off=3,
           call_usage=CALLS[1:3]),
]


def test_a_summary_row_holds_the_summary_fields_in_order() -> None:
    assert SummaryRow._fields == tuple(f.name for f in dataclass_fields(RecordSummary))
    assert UsageCounts._fields == tuple(Usage.model_fields)


@pytest.mark.parametrize("full", RECORDS)
def test_a_row_reads_as_the_summary_and_pickles_as_plain_values(full: SampleRecord) -> None:
    """What a worker sends for each record (``SampleRecord.row``): the summary's values, its calls' usage as counts;
    only the two tuple classes are named in the pickle (#44)."""
    summary, row = full.slim(), full.row()
    unpickler = Globals(pickle.dumps(row, protocol=pickle.HIGHEST_PROTOCOL))
    back = unpickler.load()
    assert back == row
    assert {name for _, name in unpickler.named} <= {"SummaryRow", "UsageCounts"}
    for name in SummaryRow._fields:
        if name != "usage_groups":
            assert getattr(back, name) == getattr(summary, name), name
    assert [(key, tuple(counts)) for key, counts in back.usage_by()] == \
        [(key, tuple(getattr(usage, f) for f in UsageCounts._fields)) for key, usage in summary.usage_by()]
