"""Meaning-preserving perturbations of the tables a prompt shows, shared by every benchmark that shows tables.

A table's facts do not depend on the order of its rows or columns, on which way round it is written, on blank
rows, on its header line being there (when the question names no column) or on how a number or a date is
spelt; a model that reasons over the facts should answer the same. HELM's ToRR study measures models under such
changes; these are structbench's, by name (``PERTURBATIONS``):

- ``shuffle_rows``, ``shuffle_columns``: rows (list items, graph triples) or columns (header and cells together)
  in a random order;
- ``transpose``: rows become columns, as ToRR transposes: the first column holds the old header (titled ``" "``),
  the others are titled ``0``, ``1`` ...;
- ``empty_rows``: a quarter as many empty rows as the table has (at least one) inserted at random places;
- ``no_header``: the header line blanked (serializations then leave it out where they can);
- ``thousands``: whole-cell numbers of five or more digits, and four-digit ones outside 1000-2099 (years),
  written with thousands separators (``1234567`` -> ``1,234,567``);
- ``dates``: ISO dates written out (``2020-03-15`` -> ``March 15, 2020``) and written-out dates as ISO ones.

Benchmarks accept them through ``PerturbationOptions`` (``--option perturbation=NAME[+NAME...]`` and
``perturbation_seed``), applied to the sample's own evidence at prompt time: the samples, their ids and gold
answers stay the same, so each perturbed run pairs sample by sample with the unperturbed one. Each draw is
seeded by the seed, the perturbation's name and the table's content, so a table reads the same in every question
asked of it, every run and every export. Free text is never changed; a perturbation that means nothing for a kind
of evidence (a transposed list) leaves it as it is.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from structbench.core.errors import UsageError
from structbench.core.registry import Registry, did_you_mean
from structbench.data.evidence import Evidence, Graph, ItemList, Table

NONE = "none"
"""The ``perturbation`` value that leaves the evidence as it is."""
JOIN = "+"
"""Joins perturbations applied one after the other: ``shuffle_rows+no_header``."""

TableChange = Callable[[Table, random.Random], Table]
ValueChange = Callable[[str], str]


class Perturbation:
    """One named change: of whole tables (and, where it means something, of lists and graphs), or of cell values."""

    def __init__(self, table: TableChange | None = None, value: ValueChange | None = None, *,
                 reorders_items: bool = False, description: str = "") -> None:
        self.table = table
        self.value = value
        self.reorders_items = reorders_items
        """Whether list items and graph triples are shuffled as rows are."""
        self.description = description

    def apply(self, piece: Evidence, rng: random.Random) -> Evidence:
        if isinstance(piece, Table):
            if self.table is not None:
                return self.table(piece, rng)
            if self.value is not None:
                change = self.value
                return piece.model_copy(update={"rows": [[change(c) for c in row] for row in piece.rows]})
            return piece
        if isinstance(piece, ItemList):
            if self.reorders_items:
                return piece.model_copy(update={"items": [piece.items[i] for i in _permutation(len(piece.items), rng)]})
            if self.value is not None:
                return piece.model_copy(update={"items": [self.value(i) for i in piece.items]})
        if isinstance(piece, Graph):
            if self.reorders_items:
                order = _permutation(len(piece.triples), rng)
                return piece.model_copy(update={"triples": [piece.triples[i] for i in order]})
            if self.value is not None:
                change = self.value
                return piece.model_copy(update={"triples": [(s, r, change(o)) for s, r, o in piece.triples]})
        return piece


PERTURBATIONS: Registry[Perturbation] = Registry("perturbation")


def _permutation(n: int, rng: random.Random) -> list[int]:
    order = list(range(n))
    rng.shuffle(order)
    return order


ShuffleMode = Literal["rows", "columns", "both"]


def shuffle_table(table: Table, rng: random.Random, mode: ShuffleMode) -> Table:
    """Rows and/or columns of ``table`` in a random order (columns drawn first, then rows)."""
    rows = [list(row) for row in table.rows]
    header = list(table.header)
    if mode in ("columns", "both"):
        cols = _permutation(len(header), rng)
        header = [header[j] for j in cols]
        rows = [[row[j] if j < len(row) else "" for j in cols] for row in rows]
    if mode in ("rows", "both"):
        rows = [rows[i] for i in _permutation(len(rows), rng)]
    return table.model_copy(update={"header": header, "rows": rows})


def shuffle_evidence(pieces: Sequence[Evidence], rng: random.Random, mode: ShuffleMode) -> list[Evidence]:
    """Every piece shuffled as its kind allows, from one generator (lists and graphs only when rows are
    shuffled; text and trees as they are): StructFact's ``shuffled`` strategy (the paper's Appendix K.1.2)."""
    out: list[Evidence] = []
    for piece in pieces:
        if isinstance(piece, Table):
            out.append(shuffle_table(piece, rng, mode))
        elif isinstance(piece, ItemList | Graph) and mode != "columns":
            out.append(PERTURBATIONS.get("shuffle_rows").apply(piece, rng))
        else:
            out.append(piece)
    return out


def _has_header(table: Table) -> bool:
    return any(h.strip() for h in table.header)


def transpose(table: Table, rng: random.Random) -> Table:
    """Rows as columns, as ToRR transposes (unitxt's ``TransposeTable``): one row per old column led by its name,
    under the header ``" "``, ``"0"``, ``"1"`` ...; a table without a header gets no column of empty names."""
    width = max([len(table.header), *(len(r) for r in table.rows)], default=0)
    cells = [[row[j] if j < len(row) else "" for row in table.rows] for j in range(width)]
    names = [str(i) for i in range(len(table.rows))]
    if not _has_header(table):
        return table.model_copy(update={"header": names, "rows": cells})
    header = [*table.header, *[""] * (width - len(table.header))]
    return table.model_copy(update={"header": [" ", *names], "rows": [[h, *col] for h, col in zip(header, cells,
                                                                                                strict=True)]})


def empty_rows(table: Table, rng: random.Random) -> Table:
    """``max(1, rows // 4)`` empty rows, each inserted at a random place."""
    rows = [list(r) for r in table.rows]
    width = len(table.header) or max((len(r) for r in rows), default=1)
    for _ in range(max(1, len(rows) // 4)):
        rows.insert(rng.randint(0, len(rows)), [""] * width)
    return table.model_copy(update={"rows": rows})


def no_header(table: Table, rng: random.Random) -> Table:
    """The column names blanked."""
    return table.model_copy(update={"header": [""] * len(table.header)})


_NUMBER = re.compile(r"^(?P<sign>[-+\u2212]?)(?P<int>\d+)(?P<frac>\.\d+)?(?P<pct>\s?%)?$")


def thousands(value: str) -> str:
    """A whole-cell number with thousands separators; four-digit numbers 1000-2099 (years) and anything else as
    they are."""
    m = _NUMBER.match(value.strip())
    if m is None:
        return value
    digits = m["int"]
    if len(digits) < 4 or (len(digits) == 4 and 1000 <= int(digits) <= 2099) or digits.startswith("0"):
        return value
    return f"{m['sign']}{int(digits):,}{m['frac'] or ''}{m['pct'] or ''}"


_MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|December")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_LONG = re.compile(rf"\b(?:({_MONTHS}) (\d{{1,2}}), (\d{{4}})|(\d{{1,2}}) ({_MONTHS}) (\d{{4}}))\b")


def _iso_to_long(m: re.Match[str]) -> str:
    try:
        day = datetime.strptime(m[0], "%Y-%m-%d")
    except ValueError:
        return m[0]
    return f"{day:%B} {day.day}, {day.year}"


def _long_to_iso(m: re.Match[str]) -> str:
    month, day, year = (m[1], m[2], m[3]) if m[1] else (m[5], m[4], m[6])
    try:
        return datetime.strptime(f"{year} {month} {day}", "%Y %B %d").strftime("%Y-%m-%d")
    except ValueError:
        return m[0]


def dates(value: str) -> str:
    """ISO dates (``2020-03-15``) written out (``March 15, 2020``), and written-out dates (``March 15, 2020``,
    ``15 March 2020``) as ISO ones; anything that is not a calendar date as it is."""
    if not any(ch.isdigit() for ch in value):
        return value
    swapped = _ISO.sub(lambda m: "\0" + _iso_to_long(m) + "\0", value)  # marked, so they are not swapped back
    parts = swapped.split("\0")
    return "".join(p if i % 2 else _LONG.sub(_long_to_iso, p) for i, p in enumerate(parts))


PERTURBATIONS.register("shuffle_rows", Perturbation(lambda t, rng: shuffle_table(t, rng, "rows"), reorders_items=True,
                                                    description="rows, list items and triples in a random order"))
PERTURBATIONS.register("shuffle_columns", Perturbation(lambda t, rng: shuffle_table(t, rng, "columns"),
                                                       description="columns (header and cells) in a random order"))
PERTURBATIONS.register("transpose", Perturbation(transpose, description="rows become columns"))
PERTURBATIONS.register("empty_rows", Perturbation(empty_rows, description="a quarter as many empty rows inserted"))
PERTURBATIONS.register("no_header", Perturbation(no_header, description="the column names left out"))
PERTURBATIONS.register("thousands", Perturbation(value=thousands, description="numbers with thousands separators"))
PERTURBATIONS.register("dates", Perturbation(value=dates, description="ISO dates written out and the other way"))


def parse_perturbation(spec: str) -> tuple[str, ...]:
    """``shuffle_rows+no_header`` -> its names in order (``none``: no name); an unknown one is a ``UsageError``
    naming the known ones."""
    names = tuple(part.strip() for part in spec.split(JOIN) if part.strip())
    if names in ((), (NONE,)):
        return ()
    for name in names:
        if name not in PERTURBATIONS:
            known = [NONE, *PERTURBATIONS.names()]
            raise UsageError(f"unknown perturbation {name!r}.{did_you_mean(name, known)} Known: {', '.join(known)} "
                             f"(several joined by {JOIN})")
    return names


def _digest(piece: Evidence) -> str:
    return hashlib.sha256(json.dumps(piece.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()[:16]


def perturb(pieces: Sequence[Evidence], spec: str, seed: int = 0) -> list[Evidence]:
    """``pieces`` under the perturbations ``spec`` names, one after the other; each draw seeded by ``seed``, the
    perturbation's name and the piece's content as it was given."""
    names = parse_perturbation(spec)
    if not names:
        return list(pieces)
    out = []
    for piece in pieces:
        digest = _digest(piece)
        for name in names:
            piece = PERTURBATIONS.get(name).apply(piece, random.Random(f"{seed}:{name}:{digest}"))
        out.append(piece)
    return out


class PerturbationOptions(BaseModel):
    """The run options of a benchmark that shows tables and accepts the shared perturbations: a benchmark's own
    ``Options`` model derives from it (and lists ``PERTURBATION_OPTIONS`` among its ``prompt_options``)."""

    model_config = ConfigDict(extra="forbid")

    perturbation: str = NONE
    """A meaning-preserving change of the tables shown: none, shuffle_rows, shuffle_columns, transpose, empty_rows,
    no_header, thousands, dates, or several joined by + (applied in order)."""
    perturbation_seed: int = 0
    """Seed of the perturbations' draws (with the table's content: a table reads the same in every question)."""

    @field_validator("perturbation")
    @classmethod
    def _known(cls, value: str) -> str:
        try:
            names = parse_perturbation(value)
        except UsageError as err:
            raise ValueError(str(err)) from None
        return JOIN.join(names) or NONE

    def perturbed(self, pieces: Sequence[Evidence]) -> list[Evidence]:
        """``pieces`` under these options' perturbation."""
        return perturb(pieces, self.perturbation, self.perturbation_seed)

    @property
    def perturbs(self) -> bool:
        return self.perturbation != NONE

    def perturbation_fields(self) -> dict[str, str | int]:
        """What an exported line says of the perturbation its prompt shows."""
        return {"perturbation": self.perturbation, "perturbation_seed": self.perturbation_seed}


PERTURBATION_OPTIONS = frozenset(PerturbationOptions.model_fields)
"""The options ``PerturbationOptions`` adds; they change prompts only, never which samples load."""
