"""StrucText-Eval metrics: ROUGE-L as the ``rouge`` 1.0.1 package computes it, thresholded; EM; BLEU.

The official scorer calls ``Rouge().get_scores(gold, response)[0]["rouge-l"]["f"]`` (so the gold is
the package's "hypothesis") and zeroes scores below 0.75 (paper Sec. 4.3). The package's ROUGE-L is
summary-level: both texts are split into sentences on ``"."``, each sentence is whitespace-normalized
and split on spaces; the LCS of every (reference sentence, hypothesis sentence) pair is rebuilt by
its dynamic-programming backtrack, and the *distinct tokens* of all those LCSs are pooled; recall and
precision divide that pool's size by the number of distinct reference and hypothesis tokens, and
``f = 2pr / (p + r + 1e-8)``. ``rouge_l`` reproduces this exactly (the tests compare it with the
package), with a bit-parallel LCS table so that 100k-character answers score in milliseconds.

The package rebuilds each LCS recursively, one Python call per backtrack step, so a long sentence pair
raises ``RecursionError`` under Python's default limit of 1,000 frames; the official scorer skips such a
sample. ``rouge_l_parts(..., frames=RELEASED_FRAMES)`` raises ``TooDeep`` exactly where the released
scorer's call does (the tests compare with the package run at the same depth).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any


def sentences(text: str) -> list[list[str]]:
    """The package's tokenization: split on ``"."``, drop empty pieces, normalize spaces, split on ``" "``.

    A piece of only whitespace survives as the one-token sentence ``[""]``, as in the package.
    """
    return [" ".join(piece.split()).split(" ") for piece in text.split(".") if piece]


RELEASED_FRAMES = 1000 - 13
"""The recursive calls the package's LCS reconstruction (``_recon``) may nest in the official scorer before
Python raises ``RecursionError``: the default limit of 1,000 frames less the 13 below the first ``_recon``
(the script's module, ``fire.Fire``, ``_Fire``, ``_CallAndUpdateTrace``, ``judge``, ``judge_detail``,
``calculate_rouge_l``, ``Rouge.get_scores``, ``_get_scores``, the metric's lambda,
``rouge_l_summary_level``, ``_union_lcs``, ``_recon_lcs``)."""


class TooDeep(RecursionError):
    """The package's recursive LCS reconstruction would exceed the frames it has (the official scorer skips
    the sample)."""


def _lcs_tokens(x: Sequence[str], y: Sequence[str]) -> tuple[set[str], int]:
    """The distinct tokens of the LCS of ``x`` and ``y`` that the package's backtrack rebuilds, and the
    number of nested calls its recursive backtrack makes (one per step, plus the last at a border: at most
    ``len(x) + len(y)``).

    Rows of the LCS table are kept as bit vectors (Hyyrö's recurrence): bit ``j`` of row ``i`` is 0
    where ``T[i][j+1] = T[i][j] + 1``, so ``T[i][j] = j - popcount(row_i & (2**j - 1))``.
    """
    if x == y:
        return set(x), len(x) + 1
    m = len(y)
    masks: dict[str, int] = {}
    for j, token in enumerate(y):
        masks[token] = masks.get(token, 0) | (1 << j)
    if not any(token in masks for token in x):
        return set(), m + 1  # ties go left: the backtrack walks along y to its start
    full = (1 << m) - 1
    rows = [full]
    v = full
    for token in x:
        u = v & masks.get(token, 0)
        v = ((v + u) | (v - u)) & full
        rows.append(v)
    found: set[str] = set()
    i, j = len(x), m
    calls = 1
    while i > 0 and j > 0:
        calls += 1
        if x[i - 1] == y[j - 1]:
            found.add(x[i - 1])
            i -= 1
            j -= 1
            continue
        up = j - (rows[i - 1] & ((1 << j) - 1)).bit_count()
        left = (j - 1) - (rows[i] & ((1 << (j - 1)) - 1)).bit_count()
        if up > left:
            i -= 1
        else:
            j -= 1
    return found, calls


class EmptyText(ValueError):
    """A text with no sentence (empty, or only dots): the package raises here."""


def rouge_l_parts(hypothesis: str, reference: str, *, frames: int | None = None) -> tuple[float, float, float]:
    """``(f, p, r)`` of ``Rouge().get_scores(hypothesis, reference)[0]["rouge-l"]``; raises ``EmptyText`` where
    the package raises ``ValueError`` and, given ``frames``, ``TooDeep`` where its LCS reconstruction would nest
    more calls than that (``RELEASED_FRAMES``: where the official scorer raises ``RecursionError``)."""
    hyp, ref = sentences(hypothesis), sentences(reference)
    if not hyp or not ref:
        raise EmptyText("Collections must contain at least 1 sentence.")
    m = len({w for s in ref for w in s})
    n = len({w for s in hyp for w in s})
    # Only the pairs that may add a token or be too deep are rebuilt, in the same order (so the same pair raises):
    # a pair whose shared tokens are all pooled adds nothing, and it cannot be too deep when its two lengths
    # together fit the frames (the backtrack makes at most one call per token of either). A hypothesis sentence
    # whose tokens are all pooled, and that fits with the longest reference sentence, is settled for good (the
    # pool only grows), and so is a reference sentence. A long answer against a long gold is hundreds of
    # thousands of pairs, most of them adding nothing.
    longest_ref, longest_hyp = max(map(len, ref)), max(map(len, hyp))
    active = [(s, set(s)) for s in hyp]
    pooled: set[str] = set()
    for ref_s in ref:
        ref_set = set(ref_s)
        if (frames is None or len(ref_s) + longest_hyp <= frames) and pooled.issuperset(ref_set):
            continue
        still = []
        for hyp_s, hyp_set in active:
            if (frames is None or len(hyp_s) + longest_ref <= frames) and pooled.issuperset(hyp_set):
                continue  # settled: dropped from the rows below too
            still.append((hyp_s, hyp_set))
            if (frames is None or len(ref_s) + len(hyp_s) <= frames) and pooled.issuperset(ref_set & hyp_set):
                continue
            tokens, calls = _lcs_tokens(ref_s, hyp_s)
            if frames is not None and calls > frames:
                raise TooDeep(f"rebuilding an LCS nests {calls} calls; the released scorer has room for {frames}")
            pooled |= tokens
        active = still
    llcs = len(pooled)
    r_lcs = llcs / m
    p_lcs = llcs / n
    f_lcs = 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8))
    return f_lcs, p_lcs, r_lcs


def rouge_l(hypothesis: str, reference: str) -> float:
    """``Rouge().get_scores(hypothesis, reference)[0]["rouge-l"]["f"]``; raises ``EmptyText`` where it raises."""
    return rouge_l_parts(hypothesis, reference)[0]


def official_rouge_l(prediction: str, gold: str) -> float:
    """The official scorer's call, ``calculate_rouge_l(gold, prediction)``: the gold is the package's hypothesis."""
    return rouge_l(gold, prediction)


def thresholded(value: float, threshold: float = 0.75) -> float:
    """Paper Sec. 4.3: a RougeL below ``threshold`` counts as 0, otherwise its raw value."""
    return 0.0 if value < threshold else value


_SYMBOL = re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])")
_NON_DIGIT_POINT = re.compile(r"([^0-9])([\.,])")
_POINT_NON_DIGIT = re.compile(r"([\.,])([^0-9])")
_DIGIT_DASH = re.compile(r"([0-9])(-)")
_PADDED = {".": " . ", ",": " , ", "-": " - "}


@functools.lru_cache(maxsize=8)
def tokenize_13a(line: str) -> str:
    """sacrebleu's ``13a`` tokenization (``Tokenizer13a``), the same text for every line (the tests compare them).

    sacrebleu substitutes its four patterns with ``\\1``-templates, which Python 3.11 expands in Python at every
    match (a structured answer matches at every space and bracket); splitting on the same patterns and joining the
    pieces does the same substitutions in C, about three times as fast. A few lines are cached, for ``sentence_score``
    tokenizes the reply and the gold ``bleu`` just did; sacrebleu keeps 65,536 of them, twice over (its two tokenizers),
    which for replies of 2 KB is 460 MiB."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    line = " ".join(_SYMBOL.split(f" {line} "))  # each symbol c becomes " c "
    parts = _NON_DIGIT_POINT.split(line)  # [text, before, point, text, ...]: "x." becomes "x . "
    parts[2::3] = [_PADDED[p] for p in parts[2::3]]
    parts = _POINT_NON_DIGIT.split("".join(parts))  # ".x" becomes " . x"
    parts[1::3] = [_PADDED[p] for p in parts[1::3]]
    parts = _DIGIT_DASH.split("".join(parts))  # "1-" becomes "1 - "
    parts[2::3] = [_PADDED[p] for p in parts[2::3]]
    return " ".join("".join(parts).split())


@functools.cache
def _sentence_bleu() -> Any:
    from sacrebleu.metrics import BLEU

    metric = BLEU(effective_order=True)  # what sacrebleu.sentence_bleu builds on every call
    metric.tokenizer = tokenize_13a  # its own 13a, faster
    return metric


def bleu(prediction: str, gold: str) -> float:
    """Sentence BLEU (sacrebleu defaults) on a 0-1 scale.

    A reply that shares no token with the gold (most wrong answers) scores 0 without building either text's
    n-grams: sacrebleu returns 0 for no matching n-gram of any order, and an n-gram matches only if its words do.
    The tokens are 13a's (``tokenize_13a``, cached for ``sentence_score``)."""
    metric = _sentence_bleu()
    tokens = tokenize_13a(prediction.rstrip()).split()
    if metric.lowercase or not set(tokens).isdisjoint(tokenize_13a(gold.rstrip()).split()):
        return float(metric.sentence_score(prediction, [gold]).score) / 100.0
    return 0.0
