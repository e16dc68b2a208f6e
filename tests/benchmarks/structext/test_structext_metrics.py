"""Our ROUGE-L equals the ``rouge`` 1.0.1 package's, on random, edge-case and real answer pairs."""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from structbench.benchmarks.structext.metrics import (
    EmptyText,
    bleu,
    official_rouge_l,
    rouge_l,
    sentences,
    thresholded,
    tokenize_13a,
)
from structbench.benchmarks.structext.suites import suite_items

Rouge = pytest.importorskip("rouge").Rouge


def package(hyp: str, ref: str) -> float | str:
    try:
        return float(Rouge(metrics=["rouge-l"]).get_scores(hyp, ref)[0]["rouge-l"]["f"])
    except ValueError:
        return "ValueError"


def ours(hyp: str, ref: str) -> float | str:
    try:
        return rouge_l(hyp, ref)
    except EmptyText:
        return "ValueError"


@pytest.fixture(autouse=True)
def _deep_recursion() -> Iterator[None]:
    """The package rebuilds LCSs recursively; give it room for a few hundred tokens."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    yield
    sys.setrecursionlimit(old)


EDGE_CASES = [
    ("", "a"), ("a", ""), ("", ""), ("...", "a"), ("a", "."), (".", "."), (" ", "a"), ("a. ", "a"),
    ("a .b", "a b"), ("a a a", "a"), ("a", "a a a"), ("a b a b", "b a b a"), ("True", "True"),
    ("True", "False"), ("x.png\ny.jpg", "x.png y.jpg"), ("a\tb\nc", "a b c"), ("a\xa0b", "a b"),
    ("A", "a"), ("a. b. c", "c. b. a"), ("a b c d e", "e d c b a"), ("x y. . z", "x. y z"),
]


@pytest.mark.parametrize(("hyp", "ref"), EDGE_CASES)
def test_edge_cases_match_the_package(hyp: str, ref: str) -> None:
    assert ours(hyp, ref) == package(hyp, ref)
    assert ours(ref, hyp) == package(ref, hyp)


def test_random_pairs_match_the_package_exactly() -> None:
    rng = random.Random(7)
    vocab = ["a", "b", "c", "d", "e", "True", ".", "..", " ", "\n", "x.", "y z", "\t", "obj[0]", "-", "a.b"]
    for _ in range(4000):
        hyp = "".join(rng.choice(vocab) + rng.choice(("", " ")) for _ in range(rng.randint(0, 40)))
        ref = "".join(rng.choice(vocab) + rng.choice(("", " ")) for _ in range(rng.randint(0, 40)))
        assert ours(hyp, ref) == package(hyp, ref), (hyp, ref)


def test_long_repetitive_pairs_match_the_package() -> None:
    rng = random.Random(3)
    for _ in range(30):
        hyp = " ".join(rng.choice("abcab") for _ in range(rng.randint(100, 300)))
        ref = " ".join(rng.choice("abcd") for _ in range(rng.randint(100, 300)))
        assert ours(hyp, ref) == package(hyp, ref)


def test_real_answers_match_the_package() -> None:
    """Gold answers against perturbed versions of themselves and of other answers."""
    items = [i for i in suite_items("test", seed=5) if len(i.answer) < 1500][::7]
    rng = random.Random(1)
    for item, other in zip(items, items[1:] + items[:1], strict=True):
        words = item.answer.split()
        edited = " ".join(w for w in words if rng.random() > 0.2)
        for pred in (item.answer, edited, other.answer, "### Answer:\n" + item.answer):
            assert ours(item.answer, pred) == package(item.answer, pred)


def test_sentence_split_keeps_whitespace_only_pieces() -> None:
    assert sentences("a. b") == [["a"], ["b"]]
    assert sentences("a. ") == [["a"], [""]]
    assert sentences("...") == []


def test_official_call_order_and_threshold() -> None:
    # The official scorer passes (gold, response): the gold is the package's hypothesis.
    assert official_rouge_l("a b c d", "a b") == package("a b", "a b c d")
    assert thresholded(0.74) == 0.0
    assert thresholded(0.75) == 0.75
    assert thresholded(0.9) == 0.9
    assert official_rouge_l("True", "True") == pytest.approx(1.0, abs=1e-8)


def test_bleu_is_on_a_unit_scale() -> None:
    assert bleu("a b c d e", "a b c d e") == pytest.approx(1.0)
    assert bleu("x", "a b c d e") < 0.1


def _bleu_pairs() -> Iterator[tuple[str, str]]:
    """Real golds against themselves, each other, a mock server's reply and random mixes of their words with the
    characters sacrebleu's 13a tokenizer treats specially (entities, hyphens at line ends, punctuation, case)."""
    golds = [item.answer for suite in ("test", "hard") for item in suite_items(suite, 0) if len(item.answer) < 300]
    golds = random.Random(3).sample(golds, 600)  # sacrebleu takes about a second for the 4,800 pairs
    rng = random.Random(7)
    special = ["&quot;", "&amp;", "-\n", "\n", ".", ",", "A", "a", "é", "<skipped>"]
    words = [w for g in golds for w in g.split()] + special
    for gold in golds:
        other = rng.choice(golds)
        mixed = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
        for prediction in (gold, other, "A", mixed, gold.upper(), gold + " .", f"{gold}\n", mixed + " " + gold):
            yield prediction, gold


def test_bleu_equals_sacrebleus_sentence_bleu() -> None:
    # bleu() answers a reply sharing no token with the gold without sacrebleu's n-grams; both paths give its score.
    sacrebleu = pytest.importorskip("sacrebleu")
    zero = positive = 0
    for prediction, gold in _bleu_pairs():
        expected = sacrebleu.sentence_bleu(prediction, [gold]).score / 100.0
        assert bleu(prediction, gold) == expected, (prediction, gold)
        zero += expected == 0.0
        positive += expected > 0.0
    assert zero > 500 and positive > 500


def _sacrebleu_13a() -> Callable[[str], str]:
    """sacrebleu's own 13a tokenizer without its cache, so every line is tokenized by it."""
    tokenizer_13a = pytest.importorskip("sacrebleu.tokenizers.tokenizer_13a")
    tokenizer = tokenizer_13a.Tokenizer13a()
    return lambda line: tokenizer_13a.Tokenizer13a.__call__.__wrapped__(tokenizer, line)


def test_13a_tokens_equal_sacrebleus_on_the_released_texts(shared_datasets: Path) -> None:
    sacrebleu_13a = _sacrebleu_13a()
    texts: dict[str, None] = {}
    for path in sorted((shared_datasets / "structext-eval").rglob("*.json")):
        item = json.loads(path.read_text(encoding="utf-8"))
        texts.update(dict.fromkeys(item[key] for key in ("Question", "Answer", "Reference") if key in item))
    assert len(texts) > 1000
    for text in texts:
        assert tokenize_13a(text) == sacrebleu_13a(text), text[:200]


def test_13a_tokens_equal_sacrebleus_on_every_special_character() -> None:
    # Short random mixes of what each of 13a's steps acts on: entities, line ends, symbols, points and commas next
    # to digits or not, dashes after digits, other whitespace and non-ASCII.
    sacrebleu_13a = _sacrebleu_13a()
    pieces = ["a", "Z", "1", "9", " ", ".", ",", "-", "\n", "-\n", "&", ";", "&quot;", "&amp;", "&lt;", "&gt;",
              "<skipped>", "{", "}", "[", "]", '"', "'", ":", "/", "\\", "`", "~", "@", "é", "\u00a0", "\t", "_"]
    rng = random.Random(13)
    for _ in range(20000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 16)))
        assert tokenize_13a(line) == sacrebleu_13a(line), line
