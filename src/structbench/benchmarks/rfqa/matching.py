"""When does a returned cell match an expected one? (paper section 4, "Metrics").

``IntendedRule`` (the default) is the paper's text: two numbers match when the returned one is within
10% of the expected one; otherwise the texts match when their edit distance is at most 10% of the
expected text's length (so texts shorter than 10 characters must be equal). It answers in
near-linear time by indexing the candidates (exact text, sorted numbers, texts by length), which is
what keeps the metrics on a 904-tuple table under 50 ms.

``PublishedRule`` is the cell rule of galois' evaluation code as changed on 2025-07-25, after the paper
(``EditDistance.getScoreForCells``): texts match when ``floor(L(1-t)) <= distance <= ceil(L(1+t))``
with ``t = 0.1`` for cells and ``t = 0.1 * L`` for tuples, which rejects identical texts of two or
more characters; numbers match when ``|e - a| / |e| <= 0.1``, so an expected 0 never matches (option
``string_rule=published``). Inside structbench's tuple similarity it does not give the released code's
tuple similarity, which takes the first matching tuple in Java ``HashMap`` order (spider1_29's gold
against itself: 0.917 here, 0.083 there). At the paper's time galois used the intended rule.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from structbench.benchmarks.rfqa.normalize import Cell


@dataclass(slots=True)
class MatchSet:
    """The candidate cells matching one expected cell: explicit indices plus, for a number, a run of
    the candidates sorted by value (kept as bounds, so 900 years within 10% of each other cost O(1))."""

    ids: set[int] = field(default_factory=set)
    by_value: Sequence[int] = ()
    """Candidate indices of numeric cells, sorted by value (shared by all sets of one call)."""
    rank: Mapping[int, int] | None = None
    """Candidate index -> position in ``by_value``."""
    lo: int = 0
    hi: int = 0

    def __bool__(self) -> bool:
        return bool(self.ids) or self.hi > self.lo

    def __len__(self) -> int:
        return len(self.ids) + self.hi - self.lo

    def __contains__(self, index: object) -> bool:
        if index in self.ids:
            return True
        if self.rank is None or self.hi <= self.lo:
            return False
        pos = self.rank.get(index)  # type: ignore[call-overload]
        return pos is not None and self.lo <= pos < self.hi

    def __iter__(self) -> Iterator[int]:
        yield from self.ids
        yield from self.by_value[self.lo : self.hi]


Pairs = list[MatchSet]
"""For each expected cell, the candidate cells that match it."""


class MatchRule(Protocol):
    """Decides which candidate cells match each expected cell."""

    name: str

    def match(self, expected: Cell, actual: Cell, *, tuple_level: bool = False) -> bool:
        """Whether ``actual`` matches ``expected``."""
        ...

    def pairs(self, expected: Sequence[Cell], actual: Sequence[Cell], *, tuple_level: bool = False) -> Pairs:
        """For each expected cell, the indices of the matching ``actual`` cells."""
        ...


class IntendedRule:
    """The paper's rule: 10% relative numeric tolerance, edit distance up to 10% of the expected length."""

    name = "intended"

    def __init__(self, numeric_tolerance: float = 0.1, string_tolerance: float = 0.1) -> None:
        self.numeric_tolerance = numeric_tolerance
        self.string_tolerance = string_tolerance

    def _budget(self, text: str) -> int:
        return math.floor(self.string_tolerance * len(text) + 1e-9)

    def _close(self, e: float, a: float) -> bool:
        return abs(a - e) <= self.numeric_tolerance * abs(e) * (1 + 1e-12)

    def match(self, expected: Cell, actual: Cell, *, tuple_level: bool = False) -> bool:
        if expected.number is not None and actual.number is not None:
            return self._close(expected.number, actual.number)
        if expected.text == actual.text:
            return True
        k = self._budget(expected.text)
        return k > 0 and Levenshtein.distance(expected.text, actual.text, score_cutoff=k) <= k

    def pairs(self, expected: Sequence[Cell], actual: Sequence[Cell], *, tuple_level: bool = False) -> Pairs:
        # runs for every distinct cell of every column of every scored table: the loops are kept plain
        by_text: dict[str, list[int]] = {}
        texts_by_length: dict[int, list[int]] = defaultdict(list)
        numbers_by_length: dict[int, list[int]] = defaultdict(list)
        numbers: list[tuple[float, int]] = []
        for i, a in enumerate(actual):
            text = a.text
            same = by_text.get(text)
            if same is None:
                by_text[text] = [i]
            else:
                same.append(i)
            if a.number is None:
                texts_by_length[len(text)].append(i)
            else:
                numbers.append((a.number, i))
                numbers_by_length[len(text)].append(i)
        found: list[MatchSet] = []
        fuzzy: dict[tuple[int, bool], list[int]] = defaultdict(list)
        budgets: dict[int, int] = {}
        if numbers:
            numbers.sort()
            keys = [n for n, _ in numbers]
            by_value = [i for _, i in numbers]
            rank = {i: pos for pos, i in enumerate(by_value)}
        else:
            keys, by_value, rank = [], [], {}
        tolerance = self.numeric_tolerance
        for pos, e in enumerate(expected):
            text, number = e.text, e.number
            if number is not None:
                tol = tolerance * abs(number) * (1 + 1e-12)
                lo = bisect.bisect_left(keys, number - tol)
                hi = bisect.bisect_right(keys, number + tol)
                found.append(MatchSet(set(), by_value, rank, lo, hi))
            else:
                same = by_text.get(text)
                found.append(MatchSet(set(same) if same else set()))
            length = len(text)
            k = budgets.get(length)
            if k is None:
                k = budgets[length] = self._budget(text)
            if k:
                fuzzy[(length, number is not None)].append(pos)
        # edit distance, in bulk per expected length: a numeric expected text is compared as text
        # only with non-numeric returned texts (two numbers follow the numeric rule)
        for (length, numeric), positions in fuzzy.items():
            k = budgets[length]
            lengths = range(length - k, length + k + 1)
            pool = [i for n in lengths for i in texts_by_length.get(n, ())]
            if not numeric:
                pool += [i for n in lengths for i in numbers_by_length.get(n, ())]
            if not pool:
                continue
            dist = cdist(
                [expected[p].text for p in positions],
                [actual[i].text for i in pool],
                scorer=Levenshtein.distance,
                score_cutoff=k,
                dtype=np.int32,
            )
            rows_hit, cols_hit = np.nonzero(dist <= k)
            for row, col in zip(rows_hit.tolist(), cols_hit.tolist(), strict=True):
                found[positions[row]].ids.add(pool[col])
        return found


class PublishedRule:
    """The released code's rule after 2025-07-25 (bug-compatible; see the module docstring)."""

    name = "published"

    def __init__(self, numeric_tolerance: float = 0.1, string_tolerance: float = 0.1) -> None:
        self.numeric_tolerance = numeric_tolerance
        self.string_tolerance = string_tolerance

    def _t(self, text: str, tuple_level: bool) -> float:
        return self.string_tolerance * len(text) if tuple_level else self.string_tolerance

    def _numbers_match(self, e: float, a: float) -> bool:
        if e == 0:
            return False  # (e - a) / e is NaN or infinite in the released code
        return abs((e - a) / e) <= self.numeric_tolerance

    def _distance_ok(self, text: str, distance: int, tuple_level: bool) -> bool:
        t = self._t(text, tuple_level)
        return math.floor(len(text) * (1 - t)) <= distance <= math.ceil(len(text) * (1 + t))

    def match(self, expected: Cell, actual: Cell, *, tuple_level: bool = False) -> bool:
        if expected.number is not None and actual.number is not None:
            return self._numbers_match(expected.number, actual.number)
        return self._distance_ok(expected.text, Levenshtein.distance(expected.text, actual.text), tuple_level)

    def pairs(self, expected: Sequence[Cell], actual: Sequence[Cell], *, tuple_level: bool = False) -> Pairs:
        if not expected or not actual:
            return [MatchSet() for _ in expected]
        dist = cdist([e.text for e in expected], [a.text for a in actual], scorer=Levenshtein.distance)
        lengths = np.array([len(e.text) for e in expected], dtype=float)[:, None]
        t = self.string_tolerance * lengths if tuple_level else np.full_like(lengths, self.string_tolerance)
        ok = (np.floor(lengths * (1 - t)) <= dist) & (dist <= np.ceil(lengths * (1 + t)))
        out: Pairs = []
        a_numbers = [(j, a.number) for j, a in enumerate(actual) if a.number is not None]
        for i, e in enumerate(expected):
            row = set(np.flatnonzero(ok[i]).tolist())
            if e.number is not None:
                for j, num in a_numbers:
                    row.discard(j)
                    if self._numbers_match(e.number, num):
                        row.add(j)
            out.append(MatchSet(ids=row))
        return out


RULES: dict[str, type[IntendedRule] | type[PublishedRule]] = {"intended": IntendedRule, "published": PublishedRule}
"""The string/number matching rules by option name."""
