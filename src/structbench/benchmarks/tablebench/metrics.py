"""TableBench's per-answer metrics: exact match (EM), EM within a relative error, ROUGE-L.

The repository's refined metrics (``metrics/custom_em_metric.py``, April 2025) split a reference on commas into
answers and give each the same share of the score: a numeric answer matches when the prediction's answer at the
same place rounds to it (to the reference's fewest decimals; a percentage as a fraction to four decimals) or, for
EM within 10%, lies within 10% of it; any other answer must be equal. Before that, the released ``QAMetric`` passes
both texts through SQuAD's ``normalize_answer`` (lower case, punctuation, articles and extra spaces removed). That
removes the commas the answers are split on and the decimal points, minus and percent signs the numeric rules
read: ``0.85`` becomes ``085``, so "0.85" and "0.9" are 89% apart and "12.50" is not "12.5". ``released=True``
reproduces this; the default applies the rules to the answers as written and normalizes only the text answers (a
percentage may be given with or without its sign).

ROUGE-L is ``rouge_score``'s (as the ``evaluate`` module the repository loads computes it): both texts normalized,
lower-cased, split into runs of ``[a-z0-9]``, F-measure of the longest common subsequence. The repository averages
it with ``rouge_score``'s bootstrap aggregator, whose "mid" is the median of 1,000 unseeded resampled means; here it
is the plain mean (the same up to the resampling noise, and reproducible).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from rapidfuzz.distance import LCSseq

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_NUMBER = re.compile(r"^-?\d+(\.\d+)?%?$")
_TOKEN_SPLIT = re.compile(r"[^a-z0-9]+")
_TOKEN = re.compile(r"^[a-z0-9]+$")


def normalize_answer(text: str) -> str:
    """SQuAD's normalization, as the released ``QAMetric`` applies it: lower case, ASCII punctuation removed, the
    articles a/an/the removed, whitespace runs made one space."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def is_number(text: str) -> bool:
    """A plain number or percentage (``-12``, ``3.5``, ``40%``), as the refined metric reads one."""
    return bool(_NUMBER.match(text.strip()))


def _decimal(text: str) -> Decimal:
    """The number ``text`` denotes; a percentage as its fraction to four decimals (the released rule)."""
    if text.endswith("%"):
        return (Decimal(text.strip("%")) / Decimal(100)).quantize(Decimal("1.0000"), rounding=ROUND_HALF_UP)
    return Decimal(text)


def _precision(answers: list[str]) -> int:
    """The fewest decimals among the reference's numbers that are not percentages (0 when none)."""
    places = [len(a.split(".")[-1]) if "." in a else 0 for a in answers if not a.endswith("%")]
    return min(places) if places else 0


def _rounded(value: Decimal, places: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",")]


def _corrected_numbers(reference: str, prediction: str) -> tuple[Decimal, Decimal] | None:
    """Reference and prediction as numbers on the same scale: a percentage reference is read in percent, its
    prediction with or without the sign; None when the prediction is no number."""
    if reference.endswith("%"):
        prediction = prediction.removesuffix("%").strip()
        reference = reference.removesuffix("%")
    if not is_number(prediction) or prediction.endswith("%"):
        return None
    return Decimal(reference), Decimal(prediction)


NumberMatch = Callable[[str, str], bool]
"""Whether a predicted answer matches a numeric reference answer (an error reading either: no match)."""


def _per_answer(reference: str, prediction: str, released: bool,
                numbers: Callable[[list[str]], NumberMatch]) -> float:
    """The share of the reference list's answers the prediction list matches at the same place: texts as texts
    (normalized), numbers by ``numbers(references)`` (both normalized first under the released code)."""
    if released:
        reference, prediction = normalize_answer(reference), normalize_answer(prediction)
    refs, preds = _split(reference), _split(prediction)
    number_match = numbers(refs)
    score = 0.0
    for ref, pred in zip(refs, preds, strict=False):  # a reference without a prediction at its place: nothing
        if not is_number(ref):
            match = ref == pred if released else normalize_answer(ref) == normalize_answer(pred)
        else:
            try:
                match = number_match(ref, pred)
            except (InvalidOperation, ValueError):
                match = False  # the released code's bare except: a prediction that is no number does not match
        score += match / len(refs)
    return score


def exact_match(reference: str, prediction: str, *, released: bool = False) -> float:
    """EM of one answer list: the share of the reference's answers matched at the same place."""

    def numbers(refs: list[str]) -> NumberMatch:
        places = _precision([r for r in refs if is_number(r)])

        def match(ref: str, pred: str) -> bool:
            if released:
                if ref.endswith("%"):
                    return _decimal(ref) == _decimal(pred)
                return _rounded(_decimal(ref), places) == _rounded(_decimal(pred), places)
            pair = _corrected_numbers(ref, pred)
            digits = 2 if ref.endswith("%") else places  # a percentage: four decimals as a fraction
            return pair is not None and _rounded(pair[0], digits) == _rounded(pair[1], digits)

        return match

    return _per_answer(reference, prediction, released, numbers)


def tolerant_match(reference: str, prediction: str, *, error: float = 10.0, released: bool = False) -> float:
    """EM within ``error`` percent (relative to the reference; a reference of 0 must be met exactly)."""

    def match(ref: str, pred: str) -> bool:
        pair = (_decimal(ref), _decimal(pred)) if released else _corrected_numbers(ref, pred)
        if pair is None:
            return False
        want, got = pair
        return got == want if want == 0 else abs(want - got) / abs(want) <= error / 100  # Decimal to float, exactly

    return _per_answer(reference, prediction, released, lambda refs: match)


def rouge_tokens(text: str) -> list[str]:
    """``rouge_score``'s default tokenizer (no stemming): lower case, runs of ``[a-z0-9]``."""
    return [t for t in _TOKEN_SPLIT.split(text.lower()) if _TOKEN.match(t)]


def rouge_l(reference: str, prediction: str) -> float:
    """ROUGE-L F-measure of the normalized texts (0 when either has no token)."""
    ref, pred = rouge_tokens(normalize_answer(reference)), rouge_tokens(normalize_answer(prediction))
    if not ref or not pred:
        return 0.0
    lcs = LCSseq.similarity(ref, pred)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(pred), lcs / len(ref)
    return 2 * precision * recall / (precision + recall)
