"""The optional LLM-as-judge: verdict parsing, the oracle, and a judge on another backend."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from structbench.backends.base import Choice, Request, Response
from structbench.backends.current import current_sample
from structbench.backends.oracle import OracleBackend
from structbench.benchmarks.structext import BENCHMARK
from structbench.benchmarks.structext.benchmark import StrucTextEval
from structbench.benchmarks.structext.judge import Judged, is_judge_request, judge_request, parse_verdict
from structbench.contract.benchmark import Attempt, bind_sample
from structbench.core.errors import UsageError
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.cache import ResponseCache
from structbench.runner.calls import ModelPool
from structbench.runner.run import Run
from structbench.runner.selection import prepare


def _samples() -> list[Sample]:
    return list(BENCHMARK({}).load("test", DataContext(), seed=0, limit=29))


def _run(bench: StrucTextEval, samples: list[Sample], strategy: str, answer: str | None = None) -> dict[str, float]:
    """Drive ``strategy``; the answering model is the oracle, or replies ``answer`` to non-judge requests."""
    strat = bench.strategy(strategy)

    async def main() -> dict[str, float]:
        scored = []
        async with ModelPool(None):
            for sample in samples:
                async def generate(request: Request, sample: Sample = sample) -> Response:
                    text = bench.oracle(sample, request) if answer is None or is_judge_request(request) else answer
                    return Response(choices=(Choice(text=text),))

                token = bind_sample(bench, sample)
                try:
                    scored.append(bench.score(sample, await strat.run(sample, generate), bench.strategy(strategy)))
                finally:
                    current_sample.reset(token)
        return bench.aggregate(scored)

    return asyncio.run(main())


def test_verdicts_are_read_from_the_judges_reply() -> None:
    assert parse_verdict("True") == 1.0
    assert parse_verdict("**False**. The answer lists an extra item.") == 0.0
    assert parse_verdict("Verdict: true, although untrue ... false") == 1.0
    assert parse_verdict("I cannot tell.") is None


def test_judge_prompt_holds_question_reference_and_reply() -> None:
    sample = _samples()[2]
    text = judge_request(sample, "my reply").messages[-1].content  # type: ignore[index]
    assert sample.question in text and sample.gold.text in text and "my reply" in text  # type: ignore[union-attr]
    assert is_judge_request(judge_request(sample, "x")) and not is_judge_request(Request.chat("hello"))


@pytest.mark.parametrize("strategy", ["naive", "self_cot", "few_shot"])
def test_oracle_judged_by_itself_scores_one(strategy: str) -> None:
    bench = BENCHMARK({"judge": "same"})
    assert isinstance(bench.strategy(strategy), Judged)
    metrics = _run(bench, _samples(), strategy)
    assert metrics["judge"] == 1.0 and metrics["rougeL"] == 1.0


def test_judge_on_another_backend(tmp_path: Path) -> None:
    script = tmp_path / "judge.json"
    script.write_text(json.dumps({"rules": [{"match": r"\[Verdict\]", "reply": "False, it differs."}], "default": ""}))
    bench = BENCHMARK({"judge": f"mock:{script}"})
    samples = _samples()[:5]
    metrics = _run(bench, samples, "naive")  # the oracle answers, the mock judge disagrees
    assert metrics["judge"] == 0.0 and metrics["rougeL"] == 1.0
    assert bench.strategies()["naive"].judge == f"mock:{script}"  # type: ignore[attr-defined]


def test_unreadable_verdicts_count_as_wrong_and_are_reported(tmp_path: Path) -> None:
    script = tmp_path / "judge.json"
    script.write_text(json.dumps({"default": "hmm"}))
    bench = BENCHMARK({"judge": f"mock:{script}"})
    sample = _samples()[0]
    strat = bench.strategy("naive")

    async def generate(request: Request) -> Response:
        return Response(choices=(Choice(text=bench.oracle(sample, request)),))

    async def judged() -> Attempt:
        async with ModelPool(None):
            return await strat.run(sample, generate)

    scored = bench.score(sample, asyncio.run(judged()), bench.strategy("naive"))
    assert scored.values["judge"] == 0.0 and scored.values["judge_unparsed"] == 1.0


def test_no_judge_by_default() -> None:
    bench = BENCHMARK({})
    assert "judge" not in _run(bench, _samples()[:3], "naive")


def test_a_judge_on_another_backend_is_cached_by_the_run(tmp_path: Path) -> None:
    """The judge's calls go through the run's response cache: a second run asks the judge nothing."""
    script = tmp_path / "judge.json"
    script.write_text(json.dumps({"default": "True"}))
    config = RunConfig(model="oracle", benches=["structext:test"], limit=4, options={"judge": f"mock:{script}"})
    cache = ResponseCache(tmp_path / "cache.sqlite")
    for name, judge_calls in (("first", 4), ("second", 0)):  # plus four oracle calls each time (never cached)
        run = Run(tmp_path / name, config)
        metrics = run.execute(OracleBackend(), prepare(config, DataContext()), cache=cache, concurrency=2,
                              progress=False)
        assert metrics.results[0].metrics["judge"] == 1.0
        assert run.manifest.sessions[-1].model_calls == 4 + judge_calls


def test_an_unknown_judge_backend_fails_before_the_run() -> None:
    with pytest.raises(UsageError, match="unknown backend 'nosuch'"):
        BENCHMARK({"judge": "nosuch:model"}).strategies()
