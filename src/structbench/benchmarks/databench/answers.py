"""Whether a prediction is the gold answer: SemEval-2025 Task 8's official check, quirk for quirk.

The official scorer is ``databench_eval.Evaluator`` (PyPI ``databench-eval``, tested with 4.0.1): a question is
right when its ``default_compare(prediction, gold, type)`` holds, and accuracy is the share of questions that are
right. Both sides are read as text (``str``), so a program's value counts as its printed form. With
``STRIP = []'" and space``:

- **empty**: a side whose text, stripped of ``STRIP``, is ``""``, ``nan``, ``np.nan`` or ``None`` is empty; two
  empty sides agree, one empty side is wrong.
- **boolean**: both stripped and lower-cased in ``true/yes/y``, or both in ``false/no/n``.
- **category**: the stripped texts are equal, or both parse as dates (``pandas.to_datetime``) of the same day.
- **number**: every character but digits, ``.`` and ``-`` dropped, then ``trunc(100 x)`` equal on both sides (two
  decimals, truncated: ``3.149`` is ``3.14``); a side that does not parse is wrong.
- **list[category]**: the text without its outer brackets split at commas, each item stripped of ``STRIP`` (empty
  ones ``""``); the same number of items, and the same set of items (of days, when every item parses as a date).
  Order does not count; duplicates count only through the number of items.
- **list[number]**: the same split, empty items dropped, each item's digits, ``.`` and ``-`` read as a number and
  truncated to two decimals; the same number of items and the same set.

Where the official check itself fails, structbench counts the prediction wrong: pandas raises
``NotImplementedError`` (not a ``ValueError``) for a category like ``-1`` parsed as a date, which stops the
official evaluator.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

SEMANTICS = ("boolean", "category", "number", "list[category]", "list[number]")
"""DataBench's answer types (the ``type`` column of ``qa.parquet``)."""
STRIP = "[]'\" "
EMPTY = frozenset({"", "nan", "np.nan", "None"})
"""Texts (stripped of ``STRIP``) that mean no answer."""
TRUE = ("true", "yes", "y")
FALSE = ("false", "no", "n")

Check = Callable[[str, str], bool]


def _boolean(prediction: str, gold: str) -> bool:
    p, g = prediction.strip(STRIP).lower(), gold.strip(STRIP).lower()
    return (p in TRUE and g in TRUE) or (p in FALSE and g in FALSE)


def _day(text: str) -> Any:
    """The day ``text`` names, read as pandas reads a date (``ValueError`` or ``TypeError`` when it names none)."""
    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pd.to_datetime(text).date()


def _category(prediction: str, gold: str) -> bool:
    p, g = prediction.strip(STRIP), gold.strip(STRIP)
    if p == g:
        return True
    try:
        return bool(_day(p) == _day(g))
    except (ValueError, TypeError):
        return False
    except Exception:  # the official check stops here (see the module docstring): a wrong prediction
        return False


def _digits(text: str) -> float:
    return float("".join(c for c in text if c.isdigit() or c in ".-"))


def _number(prediction: str, gold: str) -> bool:
    try:
        return math.trunc(_digits(prediction) * 100) == math.trunc(_digits(gold) * 100)
    except (ValueError, OverflowError):
        return False


def _items(text: str) -> list[str]:
    """A list's items: the outer brackets dropped, split at commas, each stripped of ``STRIP``; empty ones ``""``."""
    items = [item.strip(STRIP) for item in text.strip("[]").split(",")]
    return ["" if item in EMPTY else item for item in items]


def _categories(prediction: str, gold: str) -> bool:
    p, g = _items(prediction), _items(gold)
    if len(p) != len(g):
        return False
    try:
        try:
            return {_day(x) for x in p} == {_day(x) for x in g}
        except (ValueError, TypeError):
            return set(p) == set(g)
    except Exception:  # as the official check: any other failure is a wrong prediction
        return False


def _numbers(text: str) -> list[float]:
    values = sorted(_digits(item.strip()) for item in text.strip("[]").split(",") if item.strip())
    return [int(v * 100) / 100 for v in values]


def _number_lists(prediction: str, gold: str) -> bool:
    try:
        p, g = _numbers(prediction), _numbers(gold)
    except (ValueError, OverflowError):
        return False
    return len(p) == len(g) and set(p) == set(g)


CHECKS: dict[str, Check] = {
    "boolean": _boolean,
    "category": _category,
    "number": _number,
    "list[category]": _categories,
    "list[number]": _number_lists,
}


def is_correct(prediction: object, gold: object, semantic: str) -> bool:
    """Whether ``prediction`` is right for a question of answer type ``semantic`` whose answer is ``gold`` (both
    read as ``str``), as the official scorer decides (the module docstring). An unknown type is a ``ValueError``."""
    check = CHECKS.get(semantic.strip())
    if check is None:
        raise ValueError(f"DataBench has no answer type {semantic!r} (types: {', '.join(SEMANTICS)})")
    p, g = str(prediction), str(gold)
    p_empty, g_empty = p.strip(STRIP) in EMPTY, g.strip(STRIP) in EMPTY
    if p_empty or g_empty:
        return p_empty and g_empty
    return check(p, g)
