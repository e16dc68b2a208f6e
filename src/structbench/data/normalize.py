"""Answer normalization shared by benchmarks that compare answers taken from databases (RFQA, SKA-Bench).

- ``strip_accents``: ``é`` -> ``e``;
- ``parse_number``: the number a lower-case, accent-free text denotes, with shorthand expanded (``1k``
  -> 1000, ``2.5m`` -> 2500000, ``3 billion`` -> 3000000000) and thousands/decimal separators read in
  either convention (``1.000,5`` and ``1,000.5`` -> 1000.5);
- ``number_text``: the canonical text of a number (``1000``, ``1000.5``).

Choices: commas, spaces or apostrophes between groups of three digits (``1,000``, ``1 234 567``) and
repeated dots (``1.000.000``) separate thousands; when both a dot and a comma occur the last one is the
decimal separator; any other lone comma is a decimal comma (``3,5``); a single dot is always a decimal
point (``1.008`` stays 1.008, an atomic weight). Shorthand is only read when the whole text is a number
and its suffix, so ``b-block`` or a name with an initial is never mistaken for a number.
"""

from __future__ import annotations

import math
import re
import unicodedata

_SUFFIXES = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "mio": 1e6,
    "million": 1e6,
    "millions": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "billions": 1e9,
    "t": 1e12,
    "tn": 1e12,
    "trillion": 1e12,
}
_NUMBER = re.compile(r"^([+-]?)(\d[\d.,\s\u202f\u00a0']*\d|\d)\s*([a-z]*)$")
_GROUPED = re.compile(r"^\d{1,3}([.,\s\u202f\u00a0'])\d{3}(\1\d{3})*$")


def strip_accents(text: str) -> str:
    """``é`` -> ``e``: decompose and drop combining marks."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _plain_number(body: str) -> float | None:
    """The value of a digit string with thousands and decimal separators in either convention."""
    grouped = _GROUPED.match(body)
    if grouped:
        if grouped.group(1) == "." and body.count(".") == 1:
            return float(body)  # "1.000" or "1.008": a decimal point
        return float(re.sub(r"\D", "", body))
    compact = re.sub(r"[\s\u202f\u00a0']", "", body)
    has_dot, has_comma = "." in compact, "," in compact
    if has_dot and has_comma:
        decimal = "." if compact.rfind(".") > compact.rfind(",") else ","
        thousands = "," if decimal == "." else "."
        compact = compact.replace(thousands, "").replace(decimal, ".")
    elif has_comma:
        if compact.count(",") > 1:
            return None
        compact = compact.replace(",", ".")
    elif compact.count(".") > 1:
        return None
    try:
        return float(compact)
    except ValueError:
        return None


def parse_number(text: str) -> float | None:
    """The number a normalized (lower-case, accent-free) text denotes, or None."""
    m = _NUMBER.match(text)
    if not m:
        return None
    sign, body, suffix = m.groups()
    if suffix and suffix not in _SUFFIXES:
        return None
    value = _plain_number(body)
    if value is None:
        return None
    if suffix:
        value *= _SUFFIXES[suffix]
    return -value if sign == "-" else value


def number_text(value: float) -> str:
    """Canonical text of a number: integral values without a decimal part, others as repr."""
    if math.isfinite(value) and value == int(value) and abs(value) < 1e18:
        return str(int(value))
    return repr(value)
