"""The paragraph after a run's table: what ran, and each score read against its baselines."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from structbench.backends.llamacpp import DEFAULT_MODEL, LlamaCppBackend, LoadParams
from structbench.report.summary import answer_counts, reading, run_summary
from structbench.runfiles.records import RecordSummary
from structbench.runfiles.results import Headline, MetricsFile, ResultEntry


def entry(value: float, low: float, high: float, **baselines: float) -> ResultEntry:
    return ResultEntry(benchmark="structfact", variant="generated", strategy="few_shot", model="llamacpp",
                       headline=Headline(name="weighted_f1", value=value, ci_low=low, ci_high=high, confidence=0.95),
                       metrics={"weighted_f1": value}, n=30, baselines=baselines)


def record(parsed: str | None, gold: str, error_kind: str | None = None) -> RecordSummary:
    return RecordSummary("structfact", "generated", "few_shot", "llamacpp", f"s{id(object())}", "t", parsed, gold,
                         0.0, {}, {}, None, 0, "e" if error_kind else None, error_kind)  # type: ignore[arg-type]


def test_a_score_inside_a_baseline_and_one_answer_everywhere_are_both_said() -> None:
    records = [record("YES", "YES" if i % 2 else "NO") for i in range(29)] + [record("NO", "NO")]
    records += [record(None, "YES", "harness"), record(None, "NO", "context")]  # not scored: not counted
    answers = answer_counts(records)[("structfact", "generated", "few_shot", "")]
    assert answers == (Counter({"YES": 29, "NO": 1}), Counter({"NO": 16, "YES": 14}))
    text = reading(entry(0.40, 0.2055, 0.6205, chance=0.3976, majority=0.3333), answers)
    assert text.startswith("weighted_f1 0.4000 [0.2055, 0.6205] cannot be told apart from the chance 0.3976 and "
                           "majority 0.3333 baselines")
    assert "answered YES in 29 of 30 samples (gold: NO 16, YES 14)" in text


def test_above_below_and_nothing_to_say() -> None:
    assert "is above every baseline (the majority baseline is 0.4500)" in reading(
        entry(0.9, 0.8, 0.95, chance=0.33, majority=0.45), None)
    assert "is below the majority baseline (0.4500)" in reading(entry(0.2, 0.1, 0.3, chance=0.33, majority=0.45), None)
    assert reading(entry(0.5, 0.4, 0.6), None) == ""  # free-text answers: no baselines
    balanced = (Counter({"YES": 15, "NO": 15}), Counter({"YES": 15, "NO": 15}))
    assert "answered" not in reading(entry(0.9, 0.8, 0.95, chance=0.33), balanced)
    # the oracle on a test set whose gold is mostly one label answers as the gold is: no "one answer" reading
    as_gold = (Counter({"YES": 27, "NO": 3}), Counter({"YES": 27, "NO": 3}))
    assert "answered" not in reading(entry(1.0, 1.0, 1.0, chance=0.5, majority=0.47), as_gold)
    assert "answered YES in 27 of 30" in reading(entry(0.4, 0.2, 0.6, chance=0.5, majority=0.33),
                                                 (Counter({"YES": 27, "NO": 3}), Counter({"YES": 15, "NO": 15})))


def test_an_interval_over_few_units_is_called_rough_with_baselines_or_without() -> None:
    """Fewer than 10 units resampled, tables or independent samples, is said of every headline: most benchmarks have
    no baselines (StrucText-Eval, the toy one), and the note once came only beside a baseline's reading."""
    for unit, baselines in (("table", {"chance": 0.33}), ("sample", {"chance": 0.33}), ("document", {}),
                            ("sample", {})):
        few = entry(0.9, 0.8, 0.95, **baselines)
        few.headline = few.headline.model_copy(update={"unit": unit, "clusters": 3})
        text = reading(few, None)
        assert f"resamples only 3 {unit}s (fewer than 10): too few for a bootstrap to be trusted" in text, text
        assert baselines or text.startswith("weighted_f1 0.9000 [0.8000, 0.9500]. The interval resamples only")
    for baselines in ({"chance": 0.33}, {}):
        fine = entry(0.9, 0.8, 0.95, **baselines)
        fine.headline = fine.headline.model_copy(update={"unit": "sample", "clusters": 10})
        assert "resamples only" not in reading(fine, None)


def test_an_interval_of_no_width_is_called_out() -> None:
    """Every sample right: every resample is too, and the interval [1.0000, 1.0000] says nothing of how far the score
    could move; the paragraph says so with baselines or without, and not of an interval with a width."""
    for baselines in ({"chance": 0.5}, {}):
        text = reading(entry(1.0, 1.0, 1.0, **baselines), None)
        assert "[1.0000, 1.0000]" in text and "The interval has no width: every resample scored the same" in text
        assert "no width" not in reading(entry(0.9, 0.8, 0.95, **baselines), None)


def test_the_paragraph_names_the_model_and_the_suite() -> None:
    title = LlamaCppBackend(Path("unused.gguf"), DEFAULT_MODEL, LoadParams(n_ctx=8192)).title
    assert title == "Gemma 3 270M (embedded, Q4_K_M) through llama.cpp, with a context of 8192 tokens"
    text = run_summary(title, "the default quick suite", MetricsFile(results=[entry(0.9, 0.8, 0.95, chance=0.3)]), {})
    assert text.startswith("What ran: Gemma 3 270M (embedded, Q4_K_M) through llama.cpp")
    assert "on the default quick suite." in " ".join(text.split()) and max(len(x) for x in text.splitlines()) <= 100
