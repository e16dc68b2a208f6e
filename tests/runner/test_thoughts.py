"""A reasoning model is scored on its answer: every benchmark's strategies against a loopback server that thinks
before it answers, its thought naming a wrong answer first (an option letter, a label, a JSON table, a program).

The answer is the oracle's, so a strategy scores exactly its maximum when no parser reads the thought; a reply
cut off inside its thought leaves the sample unanswered (counted, never parsed from the thought); malformed
replies give a parsed answer or an unanswered sample, never an error. The data are the synthetic releases."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from structbench.backends.base import Choice
from structbench.backends.factory import BackendSpec, make_backend
from structbench.contract.benchmark import Attempt
from structbench.core.redact import MASK, register_secret
from structbench.runfiles.records import SampleRecord
from structbench.runfiles.results import MetricsFile
from structbench.runfiles.runconfig import Reasoning, RunConfig
from structbench.runner.run import Run
from structbench.runner.selection import prepare
from structbench.runner.store import read_records
from structbench.runner.thoughts import MAX_REASONING_CHARS, thought_of
from structbench.testing.openai_server import serve_in_thread
from structbench.testing.reasoning_server import OracleAnswers, ReasoningServer
from synthetic_releases import SYNTHETIC, clear_release_caches, describe_synthetic, synthetic_context

REPO = Path(__file__).resolve().parents[2]
BENCHES = ["structfact:demo", "scitab:all", "skabench:rfqa", "structext:test", "rfqa:all"]
OPTIONS = {"skabench.db": "galois/archipelago", "skabench.questions": "3", "skabench.budget": "1k",
           "structfact.enhanced_context_file": str(REPO / "tests/prompts/enhanced_context.json")}
LIMIT = 2
STRATEGIES = 32
"""Every strategy of the five benchmarks."""

ANSWERED = ["inline", "opened", "reasoning_content", "reasoning", "both", "nested", "unbalanced"]
"""Shapes whose replies carry the gold answer after the thought."""
CUT_OFF = ["cutoff", "cutoff-field", "unclosed"]
"""Shapes whose replies end inside the thought."""


@pytest.fixture(scope="module")
def answers() -> Iterator[OracleAnswers]:
    """The oracle's answers to every request the run's strategies send (the synthetic releases described)."""
    with pytest.MonkeyPatch.context() as mp:
        describe_synthetic(mp)
        found = OracleAnswers()
        found.add_run(BENCHES, strategies=["all"], options=OPTIONS, limit=LIMIT, data_dir=str(SYNTHETIC))
        yield found
    clear_release_caches()


def run_shape(shape: str, answers: OracleAnswers, run_dir: Path, **reasoning: Any) -> tuple[MetricsFile,
                                                                                             list[SampleRecord]]:
    config = RunConfig(model="openai:thinker", benches=BENCHES, strategies=["all"], options=OPTIONS, limit=LIMIT,
                       data_dir=str(SYNTHETIC), reasoning=Reasoning(**reasoning))
    with pytest.MonkeyPatch.context() as mp, serve_in_thread(ReasoningServer(shape, answers)) as url:
        describe_synthetic(mp)
        backend = make_backend(BackendSpec.parse(config.model, base_url=url, max_retries=0))
        selections = prepare(config, synthetic_context())
        metrics = Run(run_dir, config).execute(backend, selections, cache=None, concurrency=8, progress=False)
    clear_release_caches()
    return metrics, list(read_records(run_dir / "samples.jsonl"))


def test_the_oracle_knows_every_request(answers: OracleAnswers, tmp_path: Path) -> None:
    """Without a thought (``plain``) every strategy scores its maximum: the server's answers are right."""
    metrics, records = run_shape("plain", answers, tmp_path)
    assert len(metrics.results) == STRATEGIES
    assert [(r.benchmark, r.strategy) for r in metrics.results if r.headline.value != 1.0] == []
    assert all(r.reasoning is None and not r.reasoning_cut_off for r in records)


@pytest.mark.parametrize("shape", ANSWERED)
def test_a_thought_before_the_answer_is_never_parsed(shape: str, answers: OracleAnswers, tmp_path: Path) -> None:
    metrics, records = run_shape(shape, answers, tmp_path)
    assert len(metrics.results) == STRATEGIES
    assert [(r.benchmark, r.strategy, r.headline.value) for r in metrics.results if r.headline.value != 1.0] == []
    assert all(r.errors == r.harness_errors == r.reasoning_cut_off == r.replies_cut_off == 0 for r in metrics.results)
    assert len(records) == STRATEGIES * LIMIT
    for record in records:  # the thought is kept apart, and no output holds any of it
        assert record.error is None, record.error
        assert record.reasoning is not None and "The answer is" in record.reasoning, (record.strategy, shape)
        assert "The answer is" not in record.output and "<think>" not in record.output
        assert not any("</think>" in o or "The answer is" in o for o in record.outputs or [])
        assert not record.reasoning_cut_off and record.replies_cut_off == 0
    if shape in ("reasoning_content", "reasoning"):  # the server counts the thought's tokens (one choice per reply)
        single = [r for r in records if r.strategy != "self_consistency"]
        assert single and all(r.reasoning_tokens and r.reasoning_tokens > 10 for r in single)


@pytest.mark.parametrize("shape", CUT_OFF)
def test_a_reply_cut_off_inside_its_thought_is_unanswered(shape: str, answers: OracleAnswers,
                                                          tmp_path: Path) -> None:
    metrics, records = run_shape(shape, answers, tmp_path)
    assert len(records) == STRATEGIES * LIMIT
    for record in records:
        assert record.error is None, record.error
        assert record.output == "" and not any(record.outputs or [])
        assert record.reasoning_cut_off and record.replies_cut_off >= 1
        assert record.reasoning is not None and "The answer is" in record.reasoning
        assert record.score == 0.0, (record.benchmark, record.strategy, record.parsed)
        assert record.parsed in (None, [], ""), (record.benchmark, record.strategy, record.parsed)
        # the model ended an unclosed thought itself (finish_reason stop) only in ``unclosed``, where no budget ran
        # out; but a request with stop strings (SciTab's ``------``) could have been ended by one
        stops = record.benchmark == "scitab" and record.strategy in ("in_context", "cot", "pot")
        assert record.replies_unclosed == (record.replies_cut_off if shape == "unclosed" and not stops else 0)
    for r in metrics.results:
        assert r.reasoning_cut_off == r.n == LIMIT and r.replies_cut_off >= LIMIT
        assert r.replies_unclosed == sum(x.replies_unclosed for x in records if (x.benchmark, x.variant, x.strategy)
                                         == (r.benchmark, r.variant, r.strategy))
        assert r.errors == r.harness_errors == 0
    assert (sum(r.replies_unclosed for r in metrics.results) > 0) == (shape == "unclosed")
    stored = json.loads((tmp_path / "metrics.json").read_text())["results"]
    assert all(r["reasoning_cut_off"] == LIMIT for r in stored)


def test_a_template_opened_thought_that_never_closes_needs_thought_opened(answers: OracleAnswers,
                                                                           tmp_path: Path) -> None:
    """A reply that began inside the thought and was cut off has no tag at all: told so (``--thought-opened``), the
    run scores it unanswered; an opened reply that closes its thought is answered either way."""
    metrics, records = run_shape("cutoff-opened", answers, tmp_path / "cut", opened=True)
    assert all(r.reasoning_cut_off and r.output == "" and r.error is None for r in records)
    assert all(r.reasoning_cut_off == r.n for r in metrics.results)
    metrics, records = run_shape("opened", answers, tmp_path / "closed", opened=True)
    assert all(r.headline.value == 1.0 for r in metrics.results)


def test_a_reply_that_is_only_a_thought_has_no_answer(answers: OracleAnswers, tmp_path: Path) -> None:
    metrics, records = run_shape("only-thought", answers, tmp_path)
    assert len(records) == STRATEGIES * LIMIT
    for record in records:
        assert record.error is None and record.output == "" and record.score == 0.0
        assert record.reasoning is not None and not record.reasoning_cut_off
    assert all(r.errors == r.harness_errors == r.reasoning_cut_off == 0 for r in metrics.results)


def test_the_record_keeps_the_thought_behind_the_output() -> None:
    first = Choice(text="", reasoning="long", reasoning_tokens=9, reasoning_cut_off=True)
    answer = Choice(text="A", reasoning="B? no, A.", reasoning_tokens=4)
    refined = Choice(text="A.", reasoning="check", reasoning_tokens=1)
    thought = thought_of(Attempt(output="A"), [first, answer, refined])
    assert (thought.reasoning, thought.tokens, thought.cut_off, thought.replies_cut_off) == ("B? no, A.", 4, False, 1)
    transformed = thought_of(Attempt(output='[{"x": 1}]'), [answer, refined])  # an executed result: the last reply's
    assert transformed.reasoning == "check"
    unanswered = thought_of(Attempt(output="", outputs=["", ""]), [first, first])
    assert unanswered.cut_off and unanswered.replies_cut_off == 2 and unanswered.reasoning == "long"
    voted = thought_of(Attempt(output="", outputs=["", "A"]), [first, answer])  # one draw answered: answered
    assert not voted.cut_off and voted.replies_cut_off == 1
    assert thought_of(Attempt(output="A"), []) == thought_of(Attempt(output="A"), [Choice(text="A")])
    assert not thought_of(Attempt(output=""), [Choice(text="")]).cut_off  # an empty answer is not a cut-off thought


def test_a_hidden_thought_keeps_its_count() -> None:
    """OpenAI's o-series show no thought but count it: the record keeps the count (reasoning.md)."""
    hidden = thought_of(Attempt(output="A"), [Choice(text="A", reasoning_tokens=64)])
    assert (hidden.reasoning, hidden.tokens, hidden.cut_off) == (None, 64, False)


def test_an_answer_that_begins_with_an_unsplit_thinking_tag_is_noted_once() -> None:
    """A Magistral reply read with the default tags: its thought reaches the parser, so the run says, once, which
    --think-tags would take it out; a run told the tags says nothing."""
    from structbench.backends.base import Request
    from structbench.backends.mock import MockBackend
    from structbench.runner.calls import ModelCaller
    from structbench.runner.control import RunControl

    def notes(**params: Any) -> list[str]:
        said: list[str] = []
        caller = ModelCaller(MockBackend(default="[THINK]B?[/THINK]A"), None, RunControl(notify=said.append))
        for question in ("q1", "q2", "q3"):
            asyncio.run(caller(Request.chat(question, **params)))
        return said

    (note,) = notes()
    assert note.startswith("note: a reply's answer begins with '[THINK]'") and "--think-tags '[THINK],[/THINK]'" in note
    assert notes(think_tags=(("[THINK]", "[/THINK]"),)) == []


def test_a_recorded_thought_is_redacted_then_cut() -> None:
    secret = "sk-test-" + "k" * 24
    register_secret(secret)
    text = f"{secret} " + "x" * (3 * MAX_REASONING_CHARS) + f" {secret}"
    kept = thought_of(Attempt(output="A"), [Choice(text="A", reasoning=text)]).reasoning
    assert kept is not None and secret not in kept and kept.startswith(MASK) and kept.endswith(MASK)
    assert MAX_REASONING_CHARS < len(kept) < MAX_REASONING_CHARS + 100 and "characters cut" in kept


def test_scored_predictions_have_their_thoughts_taken_out(tmp_path: Path) -> None:
    """``structbench score`` on a reasoning model's raw outputs: the thought is taken out before parsing, and a
    reply that never closed its thought is unanswered and counted."""
    from structbench.runner.export import first_requests, score_predictions

    config = RunConfig(model="oracle", benches=["scitab:all"], strategies=["zero_shot"], limit=4,
                       data_dir=str(SYNTHETIC))
    (selection,) = prepare(config, synthetic_context())
    bench, strategy, samples = selection.bench, selection.strategies[0], list(selection.samples)
    golds = [bench.oracle(s, r) for s, r in zip(samples, first_requests(strategy, samples), strict=True)
             if r is not None]
    thought = "<think>The answer is B) the claim is false.</think>\n"
    answered = {s.id: thought + gold for s, gold in zip(samples, golds, strict=True)}
    result = score_predictions(bench, "all", samples, strategy, answered, source=tmp_path / "p.jsonl")
    assert result.headline.value == 1.0 and result.reasoning_cut_off == 0
    cut = {**answered, samples[0].id: "<think>The answer is B"}
    result = score_predictions(bench, "all", samples, strategy, cut, source=tmp_path / "p.jsonl")
    assert (result.reasoning_cut_off, result.replies_cut_off) == (1, 1) and result.headline.value < 1.0
