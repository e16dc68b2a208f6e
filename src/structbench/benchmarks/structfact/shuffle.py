"""Shuffled evidence (the paper's evidence-resilience test, Section 4 and Appendix K.1.2).

Structured data is order-invariant, so permuting it should not change the answer: table rows and/or
columns (header and cells move together), list items and graph triples are permuted; text and trees are
left alone. The caller passes a seeded generator, so a run is reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal

from structbench.data.evidence import Evidence, Graph, ItemList, Table

ShuffleMode = Literal["rows", "columns", "both"]


def _permutation(n: int, rng: random.Random) -> list[int]:
    order = list(range(n))
    rng.shuffle(order)
    return order


def shuffle_table(table: Table, rng: random.Random, mode: ShuffleMode) -> Table:
    """Rows and/or columns of ``table`` in a random order."""
    rows = [list(row) for row in table.rows]
    header = list(table.header)
    if mode in ("columns", "both"):
        cols = _permutation(len(header), rng)
        header = [header[j] for j in cols]
        rows = [[row[j] for j in cols] for row in rows]
    if mode in ("rows", "both"):
        rows = [rows[i] for i in _permutation(len(rows), rng)]
    return table.model_copy(update={"header": header, "rows": rows})


def shuffle_evidence(pieces: Sequence[Evidence], rng: random.Random, mode: ShuffleMode) -> list[Evidence]:
    """Every piece shuffled as its kind allows (lists and graphs only when rows are shuffled)."""
    out: list[Evidence] = []
    for piece in pieces:
        if isinstance(piece, Table):
            out.append(shuffle_table(piece, rng, mode))
        elif isinstance(piece, ItemList) and mode != "columns":
            out.append(
                piece.model_copy(update={"items": [piece.items[i] for i in _permutation(len(piece.items), rng)]})
            )
        elif isinstance(piece, Graph) and mode != "columns":
            out.append(
                piece.model_copy(update={"triples": [piece.triples[i] for i in _permutation(len(piece.triples), rng)]})
            )
        else:
            out.append(piece)
    return out
