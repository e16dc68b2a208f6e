"""SKA-Bench metrics (section 4.1): answer-list F1 per instance, averaged; rejection rate; the paper's tables.

The paper scores "the agreement between the predicted answer list and the gold answer list" with F1
averaged over instances (macro-F1). Answers are compared as sets of normalized strings: accents are
removed (``São`` = ``Sao``); numbers are canonicalized with RFQA's number reading, shared in
:mod:`structbench.data.normalize`, as the gold answers come from the same databases (``1,780,000`` =
``1.780.000`` = ``1780000``, ``5.0`` = ``5``, ``3 million`` = ``3000000``, ``1.000,5`` = ``1000.5``), plus
a leading decimal point or an exponent (``.5``, ``1e5``), a leading ``$`` or trailing ``%`` dropped; other
strings are lowercased with punctuation, articles and extra whitespace removed (SQuAD style, except that
an answer made only of an article keeps it).
The official normalization is not published.
"""

from __future__ import annotations

import math
import re
import string
from collections import defaultdict
from collections.abc import Iterable, Sequence

from structbench.benchmarks.skabench.testbeds import NEGATIVE, NOISE, ORDER, PAPER_BREAKDOWNS, TESTBEDS
from structbench.contract.benchmark import Scored
from structbench.data.normalize import number_text, parse_number, strip_accents

_NUMBER = re.compile(r"^[+-]?(\d{1,3}(,\d{3})+|\d+)?(\.\d+)?([eE][+-]?\d+)?$")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def _number(text: str) -> str | None:
    """Canonical number text of an (accent-free) answer that reads as a number, else None."""
    raw = " ".join(text.lower().split()).removeprefix("$").removesuffix("%").strip()
    if not raw or not any(c.isdigit() for c in raw):
        return None
    value = parse_number(raw)
    if value is None and _NUMBER.match(raw):
        value = float(raw.replace(",", ""))
    if value is None or not math.isfinite(value):
        return None
    return number_text(round(value, 9))


def normalize(answer: str) -> str:
    """The comparable form of one answer string."""
    if not answer.isascii():
        answer = strip_accents(answer)
    number = _number(answer)
    if number is not None:
        return number
    text = " ".join(answer.lower().translate(_PUNCT).split())
    # Articles go, unless the answer is nothing else (a grade "A" stays "a").
    return " ".join(_ARTICLES.sub(" ", text).split()) or text


def answer_f1(predicted: Iterable[str] | None, gold: Iterable[str]) -> float:
    """F1 between the predicted and gold answer sets (normalized); no prediction scores 0."""
    if predicted is None:
        return 0.0
    pred = {normalize(a) for a in predicted} - {""}
    ref = {normalize(a) for a in gold} - {""}
    if not pred or not ref:
        return float(pred == ref)
    hits = len(pred & ref)
    if hits == 0:
        return 0.0
    precision, recall = hits / len(pred), hits / len(ref)
    return 2 * precision * recall / (precision + recall)


def mean(values: Sequence[float]) -> float:
    """The average, or NaN for no values (a metric that does not apply to a group)."""
    return sum(values) / len(values) if values else math.nan


PAPER_AVERAGES = {NOISE: "noise_robustness_avg", ORDER: "order_insensitivity_avg", NEGATIVE: "negative_rejection_avg"}
"""The paper's averages: Figure 5's and Figure 7's "Average" (the mean of all cells of Table 3 / Table 4) and
Table 5's "Avg." (the mean rejection rate of the knowledge types)."""


def paper_metrics(scored: Sequence[Scored]) -> dict[str, float]:
    """Each testbed's headline (named after the testbed: F1, or the rejection rate for negative rejection)
    and the paper's averages over its table cells (``PAPER_BREAKDOWNS`` groups); NaN without samples."""
    scores: dict[str, list[float]] = defaultdict(list)
    cells: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in scored:
        testbed = str(s.meta.get("testbed"))
        if testbed in PAPER_BREAKDOWNS:
            scores[testbed].append(s.score)
            cells[testbed][str(s.meta.get(PAPER_BREAKDOWNS[testbed]))].append(s.score)
    metrics = {testbed: mean(scores[testbed]) for testbed in TESTBEDS}
    for testbed, name in PAPER_AVERAGES.items():
        metrics[name] = mean([mean(v) for v in cells[testbed].values()])
    return metrics
