"""Scoring replies: right, reformatted, near, wrong and empty answers under structbench's scoring and the released
one, the corrected score recorded beside the released, the overall Mix, and the vectorized statistics."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from structbench.benchmarks.tablebench import TableBench
from structbench.benchmarks.tablebench import program as program_module
from structbench.benchmarks.tablebench.parse import python_block
from structbench.benchmarks.tablebench.program import chart_references
from structbench.benchmarks.tablebench.taxonomy import InstructionType
from structbench.contract.benchmark import AS_WRITTEN, CORRECTED, Attempt, Scored, corrected_scored
from structbench.data.sample import Sample, TextGold
from structbench.sandbox import SandboxResult
from structbench.stats.bootstrap import counts_of


def by_subtype(samples: list[Sample], qsubtype: str, chart_type: str | None = None) -> Sample:
    """The first sample of a subtype (and chart type)."""
    return next(s for s in samples if s.meta["qsubtype"] == qsubtype and
                (chart_type is None or s.meta.get("chart_type") == chart_type))


def _score(sample: Sample, reply: str, strategy: str = "dp", scorer: str = "structbench",
           artifacts: dict | None = None) -> Scored:
    bench = TableBench({"scorer": scorer})
    return bench.score(sample, Attempt(output=reply, artifacts=artifacts or {}), bench.strategy(strategy))


def _gold(sample: Sample) -> str:
    assert isinstance(sample.gold, TextGold)
    return sample.gold.text


def test_a_number_right_reformatted_near_wrong_and_missing(samples: list[Sample]) -> None:
    sample = by_subtype(samples, "Multi-hop NumericalReasoing")  # refined metric: EM
    gold = _gold(sample)
    assert gold == "37.75"
    cases = {
        f"Final Answer: {gold}": (1.0, 1.0),
        "Final Answer: 37.750": (1.0, 0.0),  # released: "37750" against "3775"
        "Reasoning ... Final Answer: AnswerName1\nFinal Answer: 37.75": (1.0, 0.0),  # released: the first line
        "Final Answer: 37.8": (0.0, 0.0),
        "Final Answer: 12": (0.0, 0.0),
        "I do not know.": (0.0, 0.0),
    }
    for reply, (ours, released) in cases.items():
        mine, theirs = _score(sample, reply), _score(sample, reply, scorer="released")
        assert (mine.score, theirs.score) == (ours, released), reply
        assert mine.values["parsed"] == float("Final Answer" in reply)
        assert corrected_scored(theirs).score == ours  # type: ignore[union-attr]
    assert _score(sample, "I do not know.").parsed is None


def test_each_subtype_is_scored_by_its_metric(samples: list[Sample]) -> None:
    stats = by_subtype(samples, "StatisticalAnalysis")  # EM within 10%
    mean, sd = (float(x) for x in _gold(stats).split(", "))
    near = _score(stats, f"Final Answer: {mean * 1.05:.2f}, {sd * 0.95:.2f}")
    assert near.score == 1.0 and near.values["em"] == 0.0 and near.meta["metric"] == "EM_with_error_10"
    describe = by_subtype(samples, "DescriptiveAnalysis")  # ROUGE-L
    half = " ".join(_gold(describe).split()[:20])
    scored = _score(describe, f"Final Answer: {half}")
    assert 0.3 < scored.score < 0.9 and scored.score == scored.values["rouge_l"] == scored.values["original"]
    impact = by_subtype(samples, "ImpactAnalysis")  # EM
    assert _score(impact, "Final Answer: Trains").score == 1.0 and _score(impact, "Final Answer: staff").score == 0.0


def test_a_chart_is_scored_from_its_stored_outcome(samples: list[Sample]) -> None:
    chart = by_subtype(samples, "ChartGeneration", "bar")
    values = [float(v) for v in chart_references(_gold(chart))[0]]
    stored = {"code": "...", "isolated": {"status": "ok", "ran": True, "output": "", "values": values},
              "released": {"status": "ok", "ran": True, "output": "", "values": values + values}}
    mine = _score(chart, "```python\n...\n```", artifacts={"program": stored})
    theirs = _score(chart, "```python\n...\n```", scorer="released", artifacts={"program": stored})
    assert (mine.score, mine.parsed, mine.values["executed"]) == (1.0, True, 1.0)
    assert (theirs.score, theirs.parsed) == (0.0, False)  # drawn twice the released way
    assert theirs.values["corrected:pass"] == 1.0


def _scored(task: str, score: float, **values: float) -> Scored:
    return Scored(id=f"{task}{score}{values}", task=task, parsed=None, gold="g", score=score,
                  values={"original": score, "parsed": 1.0, **values})


POOL = [
    _scored("FactChecking", 1.0), _scored("FactChecking", 0.0), _scored("NumericalReasoning", 0.5),
    _scored("DataAnalysis", 0.25), _scored("DataAnalysis", 1.0, executed=0.0), _scored("Visualization", 1.0,
                                                                                         executed=1.0),
    _scored("Visualization", 0.0, executed=1.0),
]


def test_the_overall_mix_and_the_released_weight_of_charts() -> None:
    ours = TableBench().aggregate(POOL)
    assert ours["overall"] == pytest.approx(3.75 / 7)
    assert ours["fact_checking"] == 0.5 and ours["data_analysis"] == 0.625 and ours["visualization"] == 0.5
    assert ours["execution_rate"] == pytest.approx(2 / 3) and ours["parse_rate"] == 1.0
    released = TableBench({"scorer": "released"}).aggregate(POOL)
    assert released["overall"] == pytest.approx((2.75 + 0.01) / 7)  # Pass@1 added as a fraction to percentages
    assert released["overall_original"] == ours["overall_original"] == pytest.approx(3.75 / 7)


@pytest.mark.parametrize("scorer", ["structbench", "released"])
def test_vectorized_statistics_equal_aggregate(scorer: str) -> None:
    bench = TableBench({"scorer": scorer})
    rng = np.random.default_rng(0)
    idx = rng.integers(0, len(POOL), size=(20, len(POOL)))
    offered = [m for m in bench.aggregate(POOL) if bench.statistic(POOL, m) is not None]
    assert set(offered) == set(bench.aggregate(POOL))
    for metric in offered:
        fast = bench.statistic(POOL, metric).weighted(counts_of(idx, len(POOL)))  # type: ignore[union-attr]
        for row, value in zip(idx, fast, strict=True):
            slow = bench.aggregate([POOL[i] for i in row]).get(metric, np.nan)
            assert value == pytest.approx(slow, nan_ok=True), metric


def test_a_program_from_a_predictions_file_runs_when_scored(samples: list[Sample],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A reply without a stored outcome runs when scored: under the released scoring, the released way and the
    corrected twin's isolated way in one sandbox, as a run runs them."""
    sample = by_subtype(samples, "Counting")
    reply = f"```python\nimport pandas as pd\nprint('Final Answer: {_gold(sample)}')\n```"
    started: list[list[str]] = []
    real = program_module.run_python

    def counted(code: str, **kwargs: Any) -> SandboxResult:
        if "job.json" in kwargs.get("files", {}):  # a program's, not the font list's
            started.append(json.loads(kwargs["files"]["job.json"])["modes"])
        return real(code, **kwargs)

    monkeypatch.setattr(program_module, "run_python", counted)
    assert _score(sample, reply, strategy="pot").score == 1.0
    assert started == [["isolated"]]
    released = _score(sample, reply, strategy="pot", scorer="released")
    assert released.score == released.values[f"{CORRECTED}score"] == 1.0 and started[1:] == [["released", "isolated"]]


def test_the_oracles_programs_are_known_deterministic(samples: list[Sample]) -> None:
    """The programs the oracle writes (a chart's, the same under every instruction type; program of thought's) are the
    ones ``run_programs`` may run once per process; a program changed by a character, or another sample's, is not."""
    bench = TableBench()
    chart = next(s for s in samples if s.meta.get("chart_type"))
    answer = next(s for s in samples if not s.meta.get("chart_type"))
    every: tuple[InstructionType, ...] = ("DP", "TCoT", "SCoT", "PoT")
    for sample, itypes in ((chart, every), (answer, every[3:])):
        for itype in itypes:
            code = python_block(bench.oracle(sample, bench.request(sample, itype)))
            assert code and TableBench.oracle_wrote(sample, code)
            assert not TableBench.oracle_wrote(sample, code + " ")
            other = answer if sample is chart else chart
            assert not TableBench.oracle_wrote(other, code)
    assert not TableBench.oracle_wrote(answer, "print('Final Answer: 1')")


def test_the_released_readers_read_the_reply_as_written_and_the_corrected_twin_the_answer(
        samples: list[Sample]) -> None:
    """A number placed beside the paper's is computed on the raw reply, as the released parser read it: a reasoning
    model's inline thought whose ``Final Answer:`` line comes first decides it; structbench's twin reads the answer."""
    sample = by_subtype(samples, "Multi-hop NumericalReasoing")
    raw = "<think>Maybe Final Answer: 999999, no.</think>Final Answer: 37.75"
    written = {AS_WRITTEN: raw}
    for scorer in ("released", "paper"):
        paper = _score(sample, "Final Answer: 37.75", scorer=scorer, artifacts=written)
        assert (paper.parsed, paper.score) == ("999999, no.</think>Final Answer: 37.75", 0.0), scorer
        assert corrected_scored(paper).score == 1.0  # type: ignore[union-attr]
    assert _score(sample, "Final Answer: 37.75", artifacts=written).score == 1.0
