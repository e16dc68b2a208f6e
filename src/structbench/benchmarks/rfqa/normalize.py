"""Cell normalization (paper section 4, "Metrics"): the same steps for expected and returned cells.

(i) accents removed (``é`` -> ``e``); (ii) lower case; (iii) shorthand numbers expanded (``1K`` ->
1000, ``2.5M`` -> 2500000, ``3 billion`` -> 3000000000); (iv) numeric formats unified (``1.000,5``
and ``1,000.5`` -> 1000.5). A cell that reads as a number becomes its canonical number text (``1000``,
``1000.5``) and carries the number for tolerant comparison; other cells become trimmed text with
runs of whitespace collapsed. NULL (JSON ``null``, missing attribute) normalizes to the empty text.

Accents, number reading and number text are shared with SKA-Bench (:mod:`structbench.data.normalize`,
which also lists the choices the paper leaves open: thousands and decimal separators, shorthand).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from structbench.data.normalize import number_text, parse_number, strip_accents

__all__ = ["ABSENT", "ABSENT_CELL", "Cell", "normalize_cell", "number_text", "parse_number", "strip_accents"]

_SPACES = re.compile(r"\s+")
_NULLS = frozenset({"null", "none", "nan"})
_NUMBER_START = frozenset("0123456789+-")


@dataclass(frozen=True, slots=True)
class Cell:
    """A normalized cell: its canonical text and, when it reads as a number, the number."""

    text: str
    number: float | None = None


class _Absent:
    """An expected attribute a returned tuple has no cell for (galois reading: its key differs): unlike NULL, it
    is no cell at all, so it is not pooled and its tuple matches no expected one."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()
ABSENT_CELL = Cell("\x00absent\x00")
"""``ABSENT`` normalized: a text no value normalizes to."""


def normalize_cell(value: Any) -> Cell:
    """Normalize one cell value (JSON scalar or database value; ``ABSENT`` stays absent)."""
    if value is ABSENT:
        return ABSENT_CELL
    if value is None:
        return Cell("")
    if isinstance(value, bool):
        return Cell("true" if value else "false")
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond any float (JSON has no limit on digits): as 1e400, non-finite
            return Cell("")
        if not math.isfinite(number):
            return Cell("")
        return Cell(number_text(number), number)
    if not isinstance(value, str):
        value = str(value)
    if not value.isascii():
        value = strip_accents(value)
    text = _SPACES.sub(" ", value.lower()).strip()
    if text in _NULLS:
        return Cell("")
    if not text or text[0] not in _NUMBER_START:
        return Cell(text)
    parsed = parse_number(text)
    if parsed is not None and math.isfinite(parsed):
        return Cell(number_text(parsed), parsed)
    return Cell(text)
