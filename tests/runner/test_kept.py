"""What a run keeps of its records (``runner.kept``): the last row of a key is its record, and resume's lookup of
the keys an earlier session settled."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from structbench.runfiles.columns import RecordView
from structbench.runfiles.records import SampleRecord
from structbench.runner import kept
from structbench.runner.kept import KeptRecords

ENTRY = ("toy", "small", "direct", "m", "")


def record(sample_id: str, *, epoch: int = 0, error: str | None = None, kind: str | None = None,
           parsed: Any = "yes", meta: dict[str, Any] | None = None) -> SampleRecord:
    return SampleRecord.model_validate({
        "benchmark": "toy", "variant": "small", "strategy": "direct", "model": "m", "id": sample_id, "task": "t",
        "prompt": None, "output": "", "parsed": parsed, "gold": "yes", "score": float(parsed == "yes"),
        "meta": meta or {}, "epoch": epoch, "error": error, "error_kind": kind,
    })


def test_settled_keys_are_the_finished_and_the_too_long_and_the_last_try_decides() -> None:
    records = KeptRecords()
    for r in (
        record("ok"),
        record("failed", error="timeout", kind="model"),
        record("long", error="prompt too long", kind="context"),
        record("bug", error="KeyError", kind="harness"),
        record("retried", error="timeout", kind="model"),
        record("retried"),  # the retry finished: the key is settled
        record("undone"),
        record("undone", error="timeout", kind="model"),  # its last try failed: tried again
        record("ok", epoch=1, error="timeout", kind="model"),
    ):
        records.add(r)
    records.freeze_settled()
    settled = {i: records.settled(ENTRY, i, 0) for i in ("ok", "failed", "long", "bug", "retried", "undone", "new")}
    assert settled == {"ok": True, "failed": False, "long": True, "bug": False, "retried": True, "undone": False,
                       "new": False}
    assert not records.settled(ENTRY, "ok", 1)
    assert not records.settled(("toy", "small", "vote", "m", ""), "ok", 0)
    assert records.entries[ENTRY].settled_count(1) == 3
    assert records.entries[ENTRY].settled_count(2) == 3


def test_keys_sharing_a_hash_are_told_apart_by_their_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "key_hash", lambda sample_id, epoch: 7)
    records = KeptRecords()
    for i in ("a", "b", "c"):
        records.add(record(i, error="timeout" if i == "b" else None, kind="model" if i == "b" else None))
    records.freeze_settled()
    assert [records.settled(ENTRY, i, 0) for i in ("a", "b", "c", "d")] == [True, False, True, False]
    assert not records.settled(ENTRY, "a", 1)


def test_the_record_view_reads_back_each_keys_last_record() -> None:
    written = [record("a", meta={"rows": 2}), record("b", parsed=None, error="timeout", kind="model"),
               record("b", parsed="no", meta={"rows": 3}), record("c", epoch=1)]
    records = KeptRecords()
    for r in written:
        records.add(r)
    entry = records.entries[ENTRY]
    rows = entry.latest()
    assert rows.tolist() == [0, 2, 3]
    view = RecordView([(entry, rows)])
    assert len(view) == 3
    expected = [written[i].slim() for i in (0, 2, 3)]
    assert list(view) == expected
    assert view[1] == expected[1] and view[-1] == expected[2]
    counts = entry.counts(rows)
    assert counts.errors == 0 and counts.counted.tolist() == [0, 2, 3]
    assert entry.failed(np.arange(4)).tolist() == [False, True, False, False]


def test_the_record_views_answer_counts_are_the_summarys() -> None:
    """Counted from the columns, as ``report.summary.answer_counts`` counts the records' summaries: labels in order of
    first appearance, an unparsed answer as ``(none)``, uncounted records and non-label gold left out, entries that
    differ only by model summed."""
    from structbench.report.summary import answer_counts

    def other(sample_id: str, **fields: Any) -> SampleRecord:
        return record(sample_id).model_copy(update=fields)

    written = [record("a", parsed="no"), record("b", parsed=None, error="timeout", kind="model"), record("c"),
               record("d", parsed="maybe"), record("e", error="KeyError", kind="harness"), record("f", parsed=3),
               other("g", gold=2, parsed=2), other("h", model="m2", parsed="no"), other("i", strategy="vote")]
    records = KeptRecords()
    for r in written:
        records.add(r)
    view = RecordView([(entry, entry.latest()) for entry in records.entries.values()])
    expected = answer_counts(iter(view))
    counted = view.answer_counts()
    assert counted == expected
    assert [list(c) for c in counted[("toy", "small", "direct", "")]] == [list(c) for c in
                                                                          expected[("toy", "small", "direct", "")]]
    assert counted[("toy", "small", "direct", "")] == ({"no": 2, "(none)": 2, "yes": 1, "maybe": 1}, {"yes": 6})


def _varied(n: int) -> list[SampleRecord]:
    """Records whose columns are sparse and whose codes' order matters: errors, cut-off replies, tokens of two models,
    values some lack, meta keys in different orders and of different types, clusters, repeated keys."""
    out = []
    for i in range(n):
        meta: dict[str, Any] = {"depth": [1, 1.0, True, "1", None][i % 5], "lang": ["yaml", "json"][i % 2]}
        if i % 3 == 0:
            meta = {"extra": [i % 2, "x"], **dict(reversed(list(meta.items())))}
        fields: dict[str, Any] = {
            "benchmark": "toy", "variant": "small", "strategy": "direct", "model": "m", "id": f"s{i % (n - 5)}",
            "task": ["t1", "t2", "t3"][i % 3], "prompt": None, "output": "", "parsed": [None, "yes", ["a", 1]][i % 3],
            "gold": "yes", "score": float(i % 2), "values": {"f1": i / n} if i % 4 else {}, "meta": meta,
            "cluster": None if i % 5 == 0 else f"c{i % 6}", "epoch": i % 2, "replies_cut_off": i % 7 == 0,
            "reasoning_cut_off": i % 9 == 0, "call_usage": [
                {"model": ["m", "judge"][i % 2], "prompt_tokens": i, "completion_tokens": None if i % 8 else 3}],
        }
        if i % 6 == 1:
            fields.update(error=f"failed {i % 4}", error_kind=["model", "harness", "context"][i % 3])
        out.append(SampleRecord.model_validate(fields))
    return out


@pytest.mark.parametrize("form", ["record", "slim", "row"])
def test_records_kept_in_bulk_read_as_records_added_one_at_a_time(form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Full records, their summaries, or the rows workers send (``SampleRecord.row``), kept in bulk, read as the full
    records added one at a time."""
    from structbench.runfiles.columns import EntryColumns, RecordColumns

    monkeypatch.setattr(kept, "WAITING", 7)  # some added in bulk while others wait
    full = _varied(40)
    records = [r if form == "record" else r.slim() if form == "slim" else r.row() for r in full]
    one, bulk = EntryColumns(RecordColumns), KeptRecords()
    for r, added in zip(full, records, strict=True):
        one.add(r)
        bulk.add(added)
    a, b = one.entries[ENTRY], bulk.entries[ENTRY]
    assert len(a) == len(b) == 40
    rows = a.current()
    assert rows.tolist() == b.current().tolist()
    assert list(a.summaries(rows)) == list(b.summaries(rows))
    x, y = a.scored(rows), b.scored(rows)
    for name in ("ids", "task", "parsed", "gold", "cluster", "epoch", "score"):
        assert getattr(x, name).tolist() == getattr(y, name).tolist()
    assert {k: (np.nan_to_num(v, nan=-1).tolist(), h.tolist()) for k, (v, h) in x.values.items()} == \
        {k: (np.nan_to_num(v, nan=-1).tolist(), h.tolist()) for k, (v, h) in y.values.items()}
    assert {k: c.tolist() for k, c in x.meta.items()} == {k: c.tolist() for k, c in y.meta.items()}
    assert x.labels("parsed") == y.labels("parsed")
    assert [(t, r.tolist()) for t, r in x.groups("depth")] == [(t, r.tolist()) for t, r in y.groups("depth")]
    assert a.usage_groups(rows) == b.usage_groups(rows)
    assert a.counts(rows).replies_cut_off == b.counts(rows).replies_cut_off
    assert a.failed(rows).tolist() == b.failed(rows).tolist()
    assert a.answer_counts(rows) == b.answer_counts(rows)
