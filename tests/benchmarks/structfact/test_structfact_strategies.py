"""StructFact strategies end to end: oracle at 1.0 everywhere, the exact prompts, options and scoring."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest

from benchmarks.structfact.structfact_helpers import oracle_generate, run, scripted_generate, user_text
from structbench.backends.base import Request
from structbench.backends.mock import MockBackend
from structbench.backends.oracle import OracleBackend
from structbench.backends.tokens import token_counter
from structbench.benchmarks.structfact import StructFact
from structbench.benchmarks.structfact.examples import EXAMPLES
from structbench.benchmarks.structfact.prompts import Prompter
from structbench.contract.benchmark import Attempt
from structbench.core.errors import DataError
from structbench.data.datasets import DataContext
from structbench.data.evidence import Table
from structbench.data.sample import Sample

pytestmark = pytest.mark.shared

STRATEGIES = [
    "zero_shot",
    "zero_shot_cot",
    "few_shot",
    "few_shot_cot",
    "without_data",
    "without_data_cot",
    "shuffled",
    "format_instructions",
    "self_refine",
    "self_consistency",
    "enhanced_context",
    "tools",
]


def _oracle_scores(bench: StructFact, samples: list[Sample]) -> dict[str, float]:
    async def one(name: str, sample: Sample) -> Any:
        attempt = await bench.strategy(name).run(sample, oracle_generate(bench, sample))
        return bench.score(sample, attempt, bench.strategy(name))

    async def every() -> dict[str, float]:
        out = {}
        for name in bench.strategies():
            scored = [await one(name, s) for s in samples]
            out[name] = bench.aggregate(scored)[bench.headline]
        return out

    return asyncio.run(every())


def _first_request(bench: StructFact, name: str, sample: Sample) -> Request:
    seen: list[Request] = []
    run(bench.strategy(name), sample, scripted_generate(["A", "A"], seen))
    return seen[0]


def _data_block(prompt: str) -> str:
    return prompt.split("Data:\n")[-1].split("\nQ: ")[0]


def test_strategy_names() -> None:
    assert list(StructFact().strategies()) == STRATEGIES
    assert StructFact().strategy(None).name == "zero_shot"


@pytest.mark.parametrize("option_map", range(6))
def test_oracle_reaches_one_on_every_strategy_under_every_option_map(demo: list[Sample], option_map: int) -> None:
    bench = StructFact({"option_map": option_map})
    assert _oracle_scores(bench, demo) == dict.fromkeys(STRATEGIES, 1.0)


@pytest.mark.parametrize(
    "options",
    [
        {"few_shot_placeholder": True, "official_without_data_cot": True, "vote_on_raw_text": True},
        {"serialization": "json", "shuffle": "rows", "shots": 3, "drop_unstructured": True},
        {"serialization": "triples", "max_evidence_tokens": 40, "token_counter": "whitespace"},
    ],
)
def test_oracle_reaches_one_with_other_options(demo: list[Sample], options: dict[str, Any]) -> None:
    assert _oracle_scores(StructFact(options), demo) == dict.fromkeys(STRATEGIES, 1.0)


def test_oracle_through_the_runner(tmp_path: Path, shared_datasets: Path) -> None:
    from structbench.runfiles.runconfig import RunConfig
    from structbench.runner.run import Run
    from structbench.runner.selection import prepare

    config = RunConfig(model="oracle", benches=["structfact:demo"], strategies=["all"], data_dir=str(shared_datasets))
    selections = prepare(config, DataContext(data_dir=shared_datasets, offline=True))
    metrics = Run(tmp_path / "run", config).execute(
        OracleBackend(), selections, cache=None, concurrency=4, progress=False
    )
    assert [r.strategy for r in metrics.results] == STRATEGIES
    for result in metrics.results:
        assert result.n == 25 and result.errors == 0
        assert result.headline.name == "weighted_f1" and result.headline.value == 1.0
        assert all(result.metrics[m] == 1.0 for m in StructFact.metric_names)
        assert {k: g.n for k, g in result.breakdowns["task"].items()} == dict.fromkeys(
            [
                "Arithmetic Calculation",
                "Combining Structural and Unstructural",
                "Composition Understanding",
                "Multi-hop Reasoning",
                "Spatiotemporal Cognition",
            ],
            5,
        )
        assert result.confusion_matrices["labels"].counts == [[21, 0, 0, 0], [0, 4, 0, 0], [0] * 4]


def test_zero_shot_prompt_is_the_official_one(demo: list[Sample]) -> None:
    sample = demo[0]
    request = _first_request(StructFact(), "zero_shot", sample)
    assert request.messages is not None and len(request.messages) == 1
    assert user_text(request) == (
        "Given a question and related structured data, please provide your answer.\n"
        "Choose one of the following options as your answer:\n"
        "A) Yes\nB) No\nC) Not sure enough\n"
        'You only need to output the option ("A", "B" or "C").\n\n'
        f"Data:\n{sample.extra['evidence_raw'][0].strip()}\n"
        "Q: Is Colombia one of the countries that didn't win any gold medals?\n"
        "A: "
    )
    p = request.params
    assert (p.max_tokens, p.temperature, p.top_p, p.n, p.logprobs, p.top_logprobs) == (10, 0.6, 0.95, 1, True, 5)
    assert p.min_tokens == 2  # the official vLLM SamplingParams(min_tokens=2)
    assert _first_request(StructFact({"min_tokens": 0}), "zero_shot", sample).params.min_tokens == 0
    multi = user_text(_first_request(StructFact(), "zero_shot", demo[22]))
    assert _data_block(multi) == "\n".join(e.strip() for e in demo[22].extra["evidence_raw"])


def test_cot_prompts_and_budgets(demo: list[Sample]) -> None:
    bench = StructFact({"logprobs": False})
    cot = _first_request(bench, "zero_shot_cot", demo[1])
    text = user_text(cot)
    assert text.startswith("Given a question and related structured data, please first provide an explanation")
    assert text.endswith("Q: Is the total number 1,200,000?\nLet's think step by step.\n\nExplanation:")
    assert 'You should first output the explanation, followed by the selected option ("A", "B", or "C").' in text
    assert (cot.params.max_tokens, cot.params.logprobs, cot.params.top_logprobs) == (512, False, 0)
    assert _first_request(bench, "few_shot_cot", demo[1]).params.max_tokens == 512
    assert _first_request(bench, "without_data_cot", demo[1]).params.max_tokens == 512
    assert _first_request(bench, "few_shot", demo[1]).params.max_tokens == 10


def test_option_map_changes_prompt_and_parsing(demo: list[Sample]) -> None:
    bench = StructFact({"option_map": 2})
    text = user_text(_first_request(bench, "zero_shot", demo[0]))
    assert "A) Not sure enough\nB) Yes\nC) No\n" in text
    assert bench.score(demo[0], Attempt(output="B"), bench.strategy("zero_shot")).parsed == "YES"
    assert bench.score(demo[0], Attempt(output="C"), bench.strategy("zero_shot")).score == 0.0
    assert bench.oracle(demo[0], _first_request(bench, "zero_shot", demo[0])) == "B"
    assert bench.export_fields(demo[0]) == {
        "label": "YES",
        "answer_option": "B",
        "option_map": {"A": "Not sure enough", "B": "Yes", "C": "No"},
    }


def test_parse_direction_follows_the_strategy(demo: list[Sample]) -> None:
    bench = StructFact()
    reply = "A first thought, but the final answer is B"
    for name in ("zero_shot", "few_shot", "without_data", "shuffled", "format_instructions", "enhanced_context"):
        assert bench.score(demo[0], Attempt(output=reply), bench.strategy(name)).parsed == "YES"
    for name in ("zero_shot_cot", "few_shot_cot", "without_data_cot", "self_refine"):
        assert bench.score(demo[0], Attempt(output=reply), bench.strategy(name)).parsed == "NO"
    unparsed = bench.score(demo[0], Attempt(output="Yes"), bench.strategy("zero_shot"))
    assert unparsed.parsed is None and unparsed.score == 0.0 and unparsed.gold == "YES"


def test_few_shot_shows_real_example_data_answered_in_letters(demo: list[Sample]) -> None:
    bench = StructFact({"option_map": 1, "shots": 5})
    text = user_text(_first_request(bench, "few_shot", demo[3]))
    assert "Here are some examples.\n" in text and "[data example]" not in text
    for example in EXAMPLES:  # all five, with their data, answers as letters under map 1 (A = No)
        assert f"Q: {example.question}\nA: {'B' if example.answer == 'Yes' else 'A'}." in text
    assert "| 2011 | 850,305" not in text.split("Now, consider")[0]
    assert "| 2009   | International Formula Master   | Fabio Leimer" in text
    assert text.index("Now, consider the following data and question:") < text.index(demo[3].question)

    one = user_text(_first_request(StructFact(), "few_shot_cot", demo[3]))
    assert one.count("Here is an example.\n") == 1 and one.count("Explanation: ") == 1
    assert "Final Answer: A." in one or "Final Answer: B." in one
    again = user_text(_first_request(StructFact(), "few_shot_cot", demo[3]))
    assert one == again  # seeded per sample
    chosen = {user_text(_first_request(StructFact(), "few_shot", s)).split("Q: ")[1] for s in demo}
    assert len(chosen) > 1  # different samples draw different examples


def test_few_shot_placeholder_is_the_official_bug(demo: list[Sample]) -> None:
    text = user_text(_first_request(StructFact({"few_shot_placeholder": True}), "few_shot", demo[0]))
    assert "Data:\n[data example]\nQ: " in text
    assert "| Rank |" not in text.split("Now, consider")[0]


def test_few_shot_examples_follow_the_serialization(demo: list[Sample]) -> None:
    text = user_text(_first_request(StructFact({"serialization": "csv", "shots": 5}), "few_shot", demo[0]))
    assert "Rank,Athlete,Time (seconds)\n1,Usain Bolt,9.63" in text


def test_without_data_prompts(demo: list[Sample]) -> None:
    plain = user_text(_first_request(StructFact(), "without_data", demo[0]))
    assert plain.startswith("Use your knowledge to answer the following question.\n")
    assert "Data:" not in plain and "Colombia          " not in plain
    fixed = user_text(_first_request(StructFact(), "without_data_cot", demo[0]))
    assert "A) Yes\nB) No\nC) Not sure enough" in fixed and fixed.endswith("Explanation:")
    official = user_text(_first_request(StructFact({"official_without_data_cot": True}), "without_data_cot", demo[0]))
    assert 'Answer with "Yes" or "No" and provide supporting evidence.' in official
    assert "A) " not in official and official.endswith("Let's think step by step.\nA: ")


def test_shuffled_keeps_the_content_in_another_order(demo: list[Sample], shared_data: DataContext) -> None:
    sample = demo[4]  # an 18-row medal table
    plain = _data_block(user_text(_first_request(StructFact({"serialization": "markdown"}), "zero_shot", sample)))
    shuffled = _data_block(user_text(_first_request(StructFact(), "shuffled", sample)))
    assert shuffled != plain
    assert sorted(set(shuffled.split("|"))) == sorted(set(plain.split("|")))
    assert shuffled == _data_block(user_text(_first_request(StructFact(), "shuffled", sample)))
    other_seed = StructFact().load("demo", shared_data, seed=1, limit=5)[4]
    assert _data_block(user_text(_first_request(StructFact(), "shuffled", other_seed))) != shuffled
    rows_only = _data_block(user_text(_first_request(StructFact({"shuffle": "rows"}), "shuffled", sample)))
    assert rows_only.splitlines()[0] == plain.splitlines()[0]  # header in place


def test_format_instructions_describe_the_serialization(demo: list[Sample]) -> None:
    text = user_text(_first_request(StructFact(), "format_instructions", demo[0]))
    assert text.startswith(
        "Given a question and related structured data, please provide your answer. The given data is in "
        "markdown format. Columns in the table are separated by ' | ', rows are separate by '\\n', and list "
        "element starts with '*'.\nChoose one of the following options"
    )
    assert "CSV format" in user_text(
        _first_request(StructFact({"serialization": "csv"}), "format_instructions", demo[0])
    )


@pytest.mark.parametrize("fmt", ["markdown", "csv", "json", "html", "xml", "triples"])
def test_serializations_reach_the_prompt(demo: list[Sample], fmt: str) -> None:
    data = _data_block(user_text(_first_request(StructFact({"serialization": fmt}), "zero_shot", demo[0])))
    (table,) = demo[0].evidence  # a medal table: Rank, Nation, Gold, ...
    assert isinstance(table, Table) and table.header[1] == "Nation"
    header, ninth = table.header, table.rows[8]
    checks = {
        "markdown": lambda d: d.startswith("| " + " | ".join(header[:3]) + " |"),
        "csv": lambda d: d.startswith(",".join(header) + "\n" + ",".join(table.rows[0]) + "\n"),
        "json": lambda d: json.loads(d)[8] == dict(zip(header, ninth, strict=True)),
        "html": lambda d: d.startswith("<table>") and "<th>Nation</th>" in d,
        "xml": lambda d: f'<cell column="Nation">{ninth[1]}</cell>' in d,
        "triples": lambda d: f"(row 9, Nation, {ninth[1]})" in d,
    }
    assert checks[fmt](data), data[:300]


def test_evidence_truncation(demo: list[Sample]) -> None:
    bench = StructFact()
    prompter = Prompter(bench.options)
    assert not any(prompter.evidence(s).truncated for s in demo)  # the demo fits in 2,500 tokens
    small = Prompter(StructFact({"max_evidence_tokens": 50}).options)
    cut = small.evidence(demo[13])
    assert cut.truncated and cut.text.endswith("\n...")
    counter = token_counter("regex")
    assert counter.count(cut.text[: -len("\n...")]) == 50
    assert cut.text.startswith(prompter.evidence(demo[13]).text[:100])
    never = Prompter(StructFact({"max_evidence_tokens": 0}).options).evidence(demo[13])
    assert not never.truncated


def test_self_refine_is_one_follow_up_turn(demo: list[Sample]) -> None:
    bench = StructFact()
    seen: list[Request] = []
    attempt = run(bench.strategy("self_refine"), demo[8], scripted_generate(["A", "Feedback: wrong director. B"], seen))
    assert len(seen) == 2
    assert seen[0].params.max_tokens == 512
    assert seen[1].messages is not None
    roles = [m.role for m in seen[1].messages]
    assert roles == ["user", "assistant", "user"] and seen[1].messages[1].content == "A"
    follow = user_text(seen[1])
    assert follow.startswith("Please review the question based on the structural data and related answer.")
    assert "A) Yes\nB) No\nC) Not sure enough\nFeedback:" in follow
    assert attempt.output == "Feedback: wrong director. B" and attempt.artifacts["initial_output"] == "A"
    scored = bench.score(demo[8], attempt, bench.strategy("self_refine"))
    assert scored.parsed == "NO" and scored.score == 1.0


def test_self_consistency_votes_over_parsed_options(demo: list[Sample]) -> None:
    bench = StructFact({"k": 5})
    seen: list[Request] = []
    attempt = run(bench.strategy("self_consistency"), demo[0], scripted_generate(["A"], seen))
    assert (seen[0].params.n, seen[0].params.temperature) == (5, 0.6)
    assert attempt.outputs == ["A"] * 5
    outputs = ["B", "A.", "A", "B", "A)", "Yes"]
    voted = bench.score(demo[0], Attempt(output=outputs[0], outputs=outputs), bench.strategy("self_consistency"))
    assert (voted.parsed, voted.values["vote_share"]) == ("YES", 0.5)
    raw_bench = StructFact({"vote_on_raw_text": True})
    raw = raw_bench.score(demo[0], Attempt(output=outputs[0], outputs=outputs), raw_bench.strategy("self_consistency"))
    assert (raw.parsed, raw.values["vote_share"]) == ("NO", pytest.approx(2 / 6))
    # a predictions file with a list of samples is voted the same way
    assert bench.score(demo[0], Attempt.from_prediction(outputs), bench.strategy("self_consistency")).parsed == "YES"


def test_enhanced_context_from_official_csv_or_json(demo: list[Sample], tmp_path: Path) -> None:
    csv_file = tmp_path / "combine_enhance.csv"
    csv_file.write_text('index,label\n15,"Focus on the date, location and cause."\n')
    text = user_text(_first_request(StructFact({"enhanced_context_file": str(csv_file)}), "enhanced_context", demo[15]))
    assert text.startswith("Given structural data and its descriptive prompt, please analyze this data")
    assert "\n\nReference prompt: \nFocus on the date, location and cause.\n\nQ: " in text
    assert text.endswith("A: \n")
    json_file = tmp_path / "enhanced.json"
    json_file.write_text(json.dumps({"16": "Pentathlon places."}))
    bench = StructFact({"enhanced_context_file": str(json_file)})
    assert "Reference prompt: \nPentathlon places.\n" in user_text(_first_request(bench, "enhanced_context", demo[16]))
    assert "Reference prompt" not in user_text(_first_request(bench, "enhanced_context", demo[15]))
    bad = tmp_path / "bad.csv"
    bad.write_text("id,text\n1,x\n")
    with pytest.raises(DataError, match="bad.csv: expected CSV columns"):
        StructFact({"enhanced_context_file": str(bad)}).strategies()


def test_drop_unstructured_context(demo: list[Sample], tmp_path: Path) -> None:
    sample = demo[17]  # list + infobox + a written instruction
    instruction = sample.extra["evidence_raw"][2]
    full = user_text(_first_request(StructFact(), "zero_shot", sample))
    assert instruction.strip() in full
    dropped = user_text(_first_request(StructFact({"drop_unstructured": True}), "zero_shot", sample))
    assert instruction.strip() not in dropped and "* Maria Gunnoe" in dropped and "| Born" in dropped
    record = {"CHALLENGE": "c", "LABEL": "NO", "QUESTION": "q?", "EVIDENCE": ["ctx", "* a"], "NEW_EVIDENCE": ["* b"]}
    path = tmp_path / "full.json"
    path.write_text(json.dumps([record]))
    bench = StructFact({"full_path": str(path), "drop_unstructured": True})
    (loaded,) = bench.load("full", DataContext(), seed=0, limit=None)
    assert _data_block(user_text(_first_request(bench, "zero_shot", loaded))) == "* b"


def test_confidence_reaches_scored_values(demo: list[Sample]) -> None:
    bench = StructFact()
    backend = MockBackend(default="A")
    attempt = run(bench.strategy("zero_shot"), demo[0], backend.generate)
    scored = bench.score(demo[0], attempt, bench.strategy("zero_shot"))
    assert scored.values["confidence"] == pytest.approx(math.exp(-0.1))
    refined = run(bench.strategy("self_refine"), demo[0], backend.generate)
    assert refined.confidence == pytest.approx(math.exp(-0.1))
    no_logprobs = run(StructFact({"logprobs": False}).strategy("zero_shot"), demo[0], backend.generate)
    assert no_logprobs.confidence is None
    assert "confidence" not in bench.score(demo[0], no_logprobs, bench.strategy("zero_shot")).values
