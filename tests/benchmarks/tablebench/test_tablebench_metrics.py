"""EM, EM within 10% and ROUGE-L: the released rules (on normalized texts) and structbench's (on the answers as
written), on answers of the kinds the release holds."""

from __future__ import annotations

import pytest

from structbench.benchmarks.tablebench.metrics import exact_match, normalize_answer, rouge_l, tolerant_match


def test_normalize_answer_is_squads() -> None:
    assert normalize_answer("The  Total is 12.5%, an increase!") == "total is 125 increase"


@pytest.mark.parametrize(
    ("reference", "prediction", "released", "corrected"),
    [
        ("1062", "1062", 1.0, 1.0),
        ("Elmdale United", "elmdale united.", 1.0, 1.0),
        ("69.75%", "69.75", 1.0, 1.0),  # a percentage with or without its sign
        ("45%", "45.3%", 0.0, 0.0),  # a percentage to two decimals
        ("12.50", "12.5", 0.0, 1.0),  # released: "1250" against "125"
        ("-3.24", "3.24", 1.0, 0.0),  # released: the minus sign is punctuation
        ("20.3", "20.34", 0.0, 1.0),  # rounded to the reference's one decimal
        ("spain, france, united kingdom", "spain, france, united kingdom", 1.0, 1.0),
        ("innings, runs scored", "runs scored, innings", 0.0, 0.0),  # answers are matched in place
        ("Ivyford, 44", "Ivyford, 45", 0.0, 0.5),  # released: one answer "ivyford 44"
        ("No clear trend", "No clear trend, No clear trend", 0.0, 1.0),  # extra answers are not counted
        ("1062", "", 0.0, 0.0),
        ("1062", "one thousand", 0.0, 0.0),
    ],
)
def test_exact_match(reference: str, prediction: str, released: float, corrected: float) -> None:
    assert exact_match(reference, prediction, released=True) == pytest.approx(released)
    assert exact_match(reference, prediction) == pytest.approx(corrected)


@pytest.mark.parametrize(
    ("reference", "prediction", "released", "corrected"),
    [
        ("0.85", "0.9", 0.0, 1.0),  # released: 85 against 9
        ("Strong positive correlation, 0.96", "Strong positive correlation, 0.90", 0.0, 1.0),
        ("Strong positive correlation, 0.96", "Weak positive correlation, 0.90", 0.0, 0.5),
        ("2472.33", "2300", 0.0, 1.0),  # released: 247233 against 2300
        ("2472.33", "2200", 0.0, 0.0),
        ("100", "110", 1.0, 1.0),  # exactly 10%
        ("0", "0.0", 1.0, 1.0),  # a reference of 0 is met exactly
        ("0", "0.01", 0.0, 0.0),
        ("9.34, 1.18", "9.33, 1.11", 0.0, 1.0),  # released: one text answer "934 118"
        ("Increasing trend", "increasing trend", 1.0, 1.0),
    ],
)
def test_tolerant_match(reference: str, prediction: str, released: float, corrected: float) -> None:
    assert tolerant_match(reference, prediction, released=True) == pytest.approx(released)
    assert tolerant_match(reference, prediction) == pytest.approx(corrected)


PAIRS = [
    ("The table shows clubs and their points.", "The table lists clubs with points and wins."),
    ("Yes, a strong positive correlation (0.99) indicates causation.", "Yes, strong positive correlation 0.99"),
    ("1062", "1,062"),
    ("Elmdale United", ""),
    ("", "anything"),
    ("a b c d e f", "f e d c b a"),
    ("Population density exhibits no causal effect (-0.10).", "No clear effect: -0.1, population density."),
]


@pytest.mark.parametrize(("reference", "prediction"), PAIRS)
def test_rouge_l_is_rouge_scores(reference: str, prediction: str) -> None:
    """The F-measure ``rouge_score`` gives on the normalized texts (what the released ``evaluate`` module runs)."""
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    want = scorer.score(normalize_answer(reference), normalize_answer(prediction))["rougeL"].fmeasure
    assert rouge_l(reference, prediction) == pytest.approx(want, abs=1e-12)
