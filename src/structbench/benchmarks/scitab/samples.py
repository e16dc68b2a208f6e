"""From claim records to samples: the test set of each variant and the demonstrations."""

from __future__ import annotations

from collections.abc import Sequence

from structbench.benchmarks.scitab.markup import Markup, clean
from structbench.benchmarks.scitab.pool import POOL_TABLES, find_demonstrations
from structbench.benchmarks.scitab.prompts import Setting
from structbench.benchmarks.scitab.source import NEI, ClaimRecord
from structbench.core.errors import DataError
from structbench.data.evidence import Table
from structbench.data.sample import LabelGold, Sample

TASK = "fact_verification"
SETTINGS: dict[str, Setting] = {"all": "3-class", "2class": "2-class"}
"""Variant -> label setting."""


def to_table(record: ClaimRecord, markup: Markup) -> Table:
    """The claim's table with its caption, cell markers treated as ``markup`` says."""
    return Table(
        header=[clean(h, markup) for h in record.table_column_names],
        rows=[[clean(c, markup) for c in row] for row in record.table_content_values],
        caption=clean(record.table_caption, markup),
    )


def to_sample(record: ClaimRecord, variant: str, markup: Markup) -> Sample:
    return Sample(
        id=record.id,
        benchmark="scitab",
        variant=variant,
        task=TASK,
        question=record.claim,
        evidence=[to_table(record, markup)],
        gold=LabelGold(label=record.label),
        meta={"table_id": record.table_id, "paper_id": record.paper_id},
    )


def select_claims(records: Sequence[ClaimRecord], variant: str, *, keep_pool: bool) -> list[ClaimRecord]:
    """The variant's claims in file order: the held-out pool removed (unless ``keep_pool``), NEI too for 2class."""
    missing = set(POOL_TABLES) - {r.table_id for r in records}
    if missing:
        raise DataError(f"scitab: held-out pool table(s) missing from the data: {', '.join(sorted(missing))}")
    chosen = [r for r in records if keep_pool or r.table_id not in POOL_TABLES]
    if SETTINGS[variant] == "2-class":
        chosen = [r for r in chosen if r.label != NEI]
    return chosen


def demonstrations(records: Sequence[ClaimRecord], variant: str, markup: Markup) -> list[Sample]:
    """The three demonstrations of the variant's setting, as samples (see ``pool.DEMONSTRATIONS``)."""
    try:
        found = find_demonstrations(records, SETTINGS[variant])
    except LookupError as err:
        raise DataError(f"scitab: {err}") from None
    return [to_sample(r, variant, markup) for r in found]
