"""A tracker's per-sample table (``Payload.sample_table``), read through the run directory's reader."""

from __future__ import annotations

import json
from pathlib import Path

import structbench
from structbench.interop.trackers.payload import Payload
from structbench.runfiles.recordlines import current_records, read_records
from toybench import ToyBench


def test_the_sample_table_holds_each_current_record_entry_by_entry_in_id_then_epoch_order(tmp_path: Path) -> None:
    run = tmp_path / "run"
    structbench.evaluate("oracle", ToyBench, strategy="vote,direct", limit=5, epochs=2, out=run, progress=False,
                         cache=tmp_path / "cache.sqlite")
    lines = (run / "samples.jsonl").read_bytes().splitlines(keepends=True)
    failed = json.dumps({**json.loads(lines[3]), "output": "", "error": "timeout", "error_kind": "model"})
    (run / "samples.jsonl").write_bytes(failed.encode() + b"\n" + b"".join(reversed(lines)))  # tried again after

    columns, rows = Payload(run, samples=True).sample_table()

    order = [(r.benchmark, r.variant, r.strategy, r.cell) for r in Payload(run).metrics.results]
    current = sorted(current_records(read_records(run / "samples.jsonl")).values(),
                     key=lambda r: (order.index((r.benchmark, r.variant, r.strategy, r.cell)), r.id, r.epoch))
    assert [(row[2], row[4], row[5], row[columns.index("error")]) for row in rows] == \
        [(r.strategy, r.id, r.epoch, "") for r in current]
    assert len(rows) == 20 and [row[2] for row in rows[:10]] == ["vote"] * 10
