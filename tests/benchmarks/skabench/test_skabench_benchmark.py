"""The benchmark end to end: variants, options, oracle = 1.0 on every strategy, scoring, export."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from structbench.backends.base import Backend, Request
from structbench.backends.mock import MockBackend, prompt_text
from structbench.backends.oracle import OracleBackend
from structbench.benchmarks import BENCHMARKS
from structbench.benchmarks.skabench import SkaBench, builder
from structbench.benchmarks.skabench.benchmark import READ_AHEAD
from structbench.benchmarks.skabench.instances import write_instances
from structbench.benchmarks.skabench.testbeds import NEGATIVE, PAPER_BREAKDOWNS, TESTBEDS
from structbench.benchmarks.skabench.units import Instance, Row, Triple
from structbench.contract.benchmark import Attempt
from structbench.core.errors import DatasetUnavailableError, UsageError
from structbench.data import AnswerListGold, Graph, LabelGold, Sample, Table, Text
from structbench.data.datasets import DataContext
from structbench.runfiles.results import MetricsFile
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.export import export_lines, score_predictions
from structbench.runner.run import Run
from structbench.runner.selection import prepare

FAST = {"questions": "3", "testbed": "all"}


@pytest.fixture(scope="module")
def loaded(shared_data: DataContext) -> tuple[SkaBench, list[Sample]]:
    bench = SkaBench(FAST)
    return bench, list(bench.load("rfqa", shared_data, seed=0, limit=None))


def _run(
    tmp_path: Path, backend: Backend, shared_data: DataContext, strategies: list[str], **options: str
) -> MetricsFile:
    config = RunConfig.model_validate(
        {
            "model": getattr(backend, "model", "mock"),
            "benches": ["skabench"],
            "strategies": strategies,
            "options": {**FAST, **options},
        }
    )
    selections = prepare(config, shared_data)
    return Run(tmp_path / "run", config).execute(
        backend,
        selections,
        cache=None,
        concurrency=8,
        progress=False,
    )


def test_registered() -> None:
    assert BENCHMARKS.get("skabench") is SkaBench
    assert SkaBench.variants[0] == "rfqa"


def test_samples_cover_every_testbed_and_type(loaded: tuple[SkaBench, list[Sample]]) -> None:
    _, samples = loaded
    assert {s.meta["testbed"] for s in samples} == set(TESTBEDS)
    assert {s.meta["knowledge_type"] for s in samples} == {"kg", "table", "kg+text", "table+text"}
    assert len({s.id for s in samples}) == len(samples)
    for s in samples:
        assert s.benchmark == "skabench" and s.variant == "rfqa" and s.task == s.meta["testbed"]
        paper_key = PAPER_BREAKDOWNS[s.meta["testbed"]]
        assert set(s.meta) == {"testbed", "knowledge_type", "budget", "position", "positive_units", paper_key}
        assert s.meta[paper_key].split("/")[0] == s.meta["knowledge_type"]
        budget = s.extra["budget_tokens"]
        assert budget * 0.95 <= s.extra["context_tokens"] <= budget
        assert s.meta["budget"] == f"{budget // 1000}k"
        if s.meta["testbed"] == NEGATIVE:
            assert s.gold == LabelGold(label="no")
            assert not s.extra["positive_structured"] and not s.extra["positive_texts"]
        else:
            assert isinstance(s.gold, AnswerListGold) and s.gold.answers == s.extra["answers"]
        if s.meta["testbed"] == "information_integration":
            assert s.meta["positive_units"] in {"2", "3", "4", ">4"}
        kinds = [type(e) for e in s.evidence]
        assert kinds[0] is (Graph if s.meta["knowledge_type"].startswith("kg") else Table)
        assert all(k is Text for k in kinds[1:]) and (len(kinds) > 1) == s.meta["knowledge_type"].endswith("+text")


def test_prompt_is_the_paper_template_over_the_counted_context(loaded: tuple[SkaBench, list[Sample]]) -> None:
    bench, samples = loaded
    for s in samples[:40]:
        prompt = bench.prompt(s)
        knowledge = prompt.split("\n**Task Description:** ")[0]
        assert bench.counter(knowledge) == s.extra["context_tokens"]
        assert prompt.endswith(
            '{"answer": "yes"} or {"answer": "no"} in the last line.'
            if s.meta["testbed"] == NEGATIVE
            else '{"answer": <YOUR ANSWER LIST>} in the last line.'
        )
        assert f"### Question:\n{s.question}\n" in prompt


def test_oracle_scores_one_on_every_strategy(tmp_path: Path, shared_data: DataContext) -> None:
    metrics = _run(tmp_path, OracleBackend(), shared_data, ["all"])
    assert [r.strategy for r in metrics.results] == ["direct", "self_consistency", "tools"]
    for r in metrics.results:
        assert r.headline.name == "f1" and r.headline.value == 1.0
        assert r.metrics == dict.fromkeys(SkaBench.metric_names, 1.0)
        assert r.errors == 0 and r.n > 50
        assert set(r.breakdowns) == {
            "testbed",
            "knowledge_type",
            "budget",
            "position",
            "positive_units",
            *PAPER_BREAKDOWNS.values(),
        }
        assert set(r.breakdowns["testbed"]) == set(TESTBEDS)
        assert set(r.breakdowns["position"]) == {"original", "prefix", "random", "suffix"}
        # F1 does not apply to rejection-only groups: the core leaves it out rather than writing NaN.
        assert r.breakdowns["testbed"][NEGATIVE].metrics == {
            "rejection_rate": 1.0,
            "negative_rejection": 1.0,
            "negative_rejection_avg": 1.0,
        }


def test_wrong_and_partial_answers_score_below_one(tmp_path: Path, shared_data: DataContext) -> None:
    def reply(request: Request) -> str:
        text = prompt_text(request)
        if "judge whether" in text:
            return '{"answer": "yes"}'
        return 'Let me look.\n{"answer": ["certainly not an answer"]}'

    metrics = _run(tmp_path, MockBackend(reply=reply), shared_data, ["direct"])
    (r,) = metrics.results
    assert r.metrics == dict.fromkeys(SkaBench.metric_names, 0.0)


def test_score_parses_last_line_and_majority(loaded: tuple[SkaBench, list[Sample]]) -> None:
    bench, samples = loaded
    qa = next(s for s in samples if s.meta["testbed"] != NEGATIVE)
    gold = qa.extra["answers"]
    right = json.dumps({"answer": gold})
    scored = bench.score(qa, Attempt(output=f"Reasoning...\n{right}"), bench.strategy("direct"))
    assert scored.score == 1.0 and scored.parsed == gold and scored.values == {"f1": 1.0}
    partial = bench.score(qa, Attempt(output=json.dumps({"answer": [*gold, "extra"]})), bench.strategy("direct"))
    assert 0 < partial.score < 1
    vote = Attempt(output="x", outputs=['{"answer": ["wrong"]}', right, right.lower()])
    assert bench.score(qa, vote, bench.strategy("self_consistency")).score == 1.0
    neg = next(s for s in samples if s.meta["testbed"] == NEGATIVE)
    assert bench.score(neg, Attempt(output='{"answer": "no"}'), bench.strategy("direct")).values == {"rejected": 1.0}
    assert bench.score(neg, Attempt(output="I don't know"), bench.strategy("direct")).score == 0.0
    rejected = bench.score(neg, Attempt(output='{"answer": "no"}'), bench.strategy("direct"))
    agg = bench.aggregate([scored, partial, rejected])
    assert agg["f1"] == pytest.approx((1 + partial.score) / 2) and agg["rejection_rate"] == 1.0


def test_export_and_score_round_trip(loaded: tuple[SkaBench, list[Sample]]) -> None:
    bench, samples = loaded
    strategy = bench.strategy(None)
    lines = list(export_lines(bench, "rfqa", samples[:30], strategy))
    for line, s in zip(lines, samples[:30], strict=True):
        assert {"testbed", "knowledge_type", "budget", "position", "positive_units", "context_tokens"} <= set(line)
        assert line["budget"] == s.extra["budget_tokens"] and isinstance(line["positive_units"], int)
        assert line["prompt"][0]["content"] == bench.prompt(s)
    predictions: dict[str, str | list[str]] = {s.id: bench.oracle(s, bench.request(s)) for s in samples[:30]}
    result = score_predictions(bench, "rfqa", samples[:30], strategy, predictions, source=Path("p.jsonl"))
    assert result.headline.value == 1.0


def test_jsonl_variant(tmp_path: Path) -> None:
    instances = [
        Instance(
            id="kg1",
            knowledge_type="kg",
            question="Which nation has the Alta Verapaz Department?",
            answers=["Guatemala"],
            positive_units=[Triple("Guatemala", "administrative_divisions", "Alta Verapaz Department")],
            noisy_units=[Triple(f"Country {i}", "administrative_divisions", f"Department {i}") for i in range(400)],
        ),
        Instance(
            id="tb1",
            knowledge_type="table",
            question="Who scored 48 goals?",
            answers=["Ray Barlow"],
            header=["Name", "Goals"],
            positive_units=[Row(("Ray Barlow", "48"), 200)],
            noisy_units=[Row((f"Player {i}", str(i)), i) for i in range(400) if i != 48],
        ),
    ]
    path = tmp_path / "mine.jsonl"
    write_instances(instances, path)
    bench = SkaBench({"path": str(path), "testbed": "noise,negative", "budget": "1k", "tokenizer": "regex"})
    samples = list(bench.load("jsonl", DataContext(), seed=0, limit=None))
    assert sorted(s.id for s in samples) == [
        "kg1/negative/1k/random",
        "kg1/noise/1k/random",
        "tb1/negative/1k/original",
        "tb1/noise/1k/original",
    ]
    table = next(s for s in samples if s.id == "tb1/noise/1k/original")
    rows = table.evidence[0].rows  # type: ignore[union-attr]
    assert ["Ray Barlow", "48"] in rows
    assert [int(r[1]) for r in rows if r[0] != "Ray Barlow"] == sorted(int(r[1]) for r in rows if r[0] != "Ray Barlow")
    only_tables = SkaBench({"path": str(path), "knowledge": "table", "tokenizer": "regex", "budget": "1k"})
    assert {s.meta["knowledge_type"] for s in only_tables.load("jsonl", DataContext(), seed=0, limit=None)} == {"table"}


def test_csv_variant_builds_from_any_folder(tmp_path: Path) -> None:
    rows = ["name,team,goals,apps"] + [f"Player {i},Team {i % 7},{i * 3 % 101},{i}" for i in range(300)]
    (tmp_path / "players.csv").write_text("\n".join(rows) + "\n")
    bench = SkaBench({"path": str(tmp_path), "questions": "6", "tokenizer": "regex", "knowledge": "table,kg"})
    samples = list(bench.load("csv", DataContext(), seed=0, limit=None))
    assert samples and {s.meta["knowledge_type"] for s in samples} == {"table", "kg"}
    assert all(s.extra["source"]["database"] == tmp_path.name for s in samples)


def test_more_questions_than_the_tables_hold_is_one_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """``-o questions=N`` past what the tables hold built fewer, silently, as ``generate skabench`` did."""
    rows = "".join(f"P{i},T{i % 3},{i * 7 % 11}\n" for i in range(8))
    (tmp_path / "players.csv").write_text("name,team,goals\n" + rows)
    bench = SkaBench({"path": str(tmp_path), "questions": "40", "templates": "lookup", "knowledge": "table",
                      "tokenizer": "regex"})
    with caplog.at_level("WARNING", logger="structbench.benchmarks.skabench.benchmark"):
        instances = bench.instances("csv", DataContext(), seed=0)
    assert len(instances) == 32
    assert [r.getMessage() for r in caplog.records] == [
        "skabench: 32 of 40 questions: 2,400 draws (60 per question asked) over table players found only 32 distinct "
        "questions; the others were 2,368 repeats"
    ]


def test_option_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown testbed"):
        SkaBench({"testbed": "speed"}).testbeds()
    with pytest.raises(UsageError, match="unknown knowledge type"):
        SkaBench({"knowledge": "graph"}).knowledge_types()
    with pytest.raises(UsageError, match="bad --option"):
        SkaBench({"underfull": "maybe"})
    with pytest.raises(UsageError, match="path="):
        SkaBench({}).load("jsonl", DataContext(), seed=0, limit=None)
    with pytest.raises(UsageError, match="no RelationalFactQA database"):
        SkaBench({"db": "bird/nothing"}).load("rfqa", DataContext(), seed=0, limit=None)
    with pytest.raises(UsageError, match="budget"):
        SkaBench({"budget": "200k", "path": "x"}).samples([], "jsonl")
    with pytest.raises(UsageError, match="unknown token counter 'bpe'"):
        _ = SkaBench({"tokenizer": "bpe"}).counter


def test_rfqa_never_downloads_offline(tmp_path: Path) -> None:
    with pytest.raises(DatasetUnavailableError, match="raw.githubusercontent.com"):
        SkaBench({}).load("rfqa", DataContext(offline=True), seed=0, limit=None)


def test_model_tokenizer_as_callable(shared_data: DataContext) -> None:
    words = SkaBench({"questions": "2", "knowledge": "kg", "budget": "2k"}, counter=lambda t: len(t.split()))
    samples = list(words.load("rfqa", shared_data, seed=0, limit=None))
    assert samples
    for s in samples:
        knowledge = words.prompt(s).split("\n**Task Description:** ")[0]
        assert 1900 <= len(knowledge.split()) <= 2000


def _planned_exactly(bench: SkaBench, loaded: Iterable[Sample]) -> None:
    """``loaded`` announced the contexts it built, and those a build left out (the plan cannot foresee them)."""
    expected = getattr(loaded, "expected", None)
    built = list(loaded)
    unbuilt = sum(bench.skipped[reason] for reason in ("positives over budget", "too little noise"))
    assert expected is not None and expected == len(built) + unbuilt


def test_a_load_announces_how_many_contexts_it_will_build(shared_data: DataContext, tmp_path: Path) -> None:
    """The testbed contexts stream (each built when read), yet their number is planned without building any, so a
    run's progress has a total from the first sample: a file's by a first pass over it, a build's where the build (or
    the limit) ends within the instances read ahead; a longer build has none rather than be held or built twice."""
    one = SkaBench({**FAST, "questions": "1"})  # 4 instances
    _planned_exactly(one, one.load("rfqa", shared_data, seed=0, limit=None))
    path = tmp_path / "instances.jsonl"
    assert write_instances(SkaBench(FAST).stream_instances("rfqa", shared_data, seed=0), path) > READ_AHEAD
    from_file = SkaBench({**FAST, "path": str(path)})
    _planned_exactly(from_file, from_file.load("jsonl", DataContext(), seed=0, limit=None))
    assert getattr(SkaBench(FAST).load("rfqa", shared_data, seed=0, limit=None), "expected", 0) is None
    assert getattr(SkaBench(FAST).load("rfqa", shared_data, seed=0, limit=5), "expected", None) == 5
    assert getattr(from_file.load("jsonl", DataContext(), seed=0, limit=5), "expected", None) == 5


def test_a_load_gives_the_samples_of_every_instance_held(
    loaded: tuple[SkaBench, list[Sample]], shared_data: DataContext, tmp_path: Path
) -> None:
    """Streaming the instances (built, or read from a file) changes no sample and no order: the samples are those of
    every instance held in a list first, as ``load`` had them."""
    bench, streamed = loaded
    held = bench.instances("rfqa", shared_data, seed=0)
    assert len(held) > READ_AHEAD  # past the instances read ahead for the total
    assert [s.model_dump() for s in streamed] == [s.model_dump() for s in bench.samples(held, "rfqa")]
    limited = list(SkaBench(FAST).load("rfqa", shared_data, seed=0, limit=40))
    assert [s.model_dump() for s in limited] == [s.model_dump() for s in bench.samples(held, "rfqa", limit=40)]
    path = tmp_path / "instances.jsonl"
    write_instances(held, path)
    from_file = SkaBench({**FAST, "path": str(path)})
    read = list(from_file.load("jsonl", DataContext(), seed=0, limit=None))
    assert [s.model_dump() for s in read] == [s.model_dump() for s in from_file.samples(held, "jsonl")]
    assert [(s.id, from_file.prompt(s)) for s in read] == [(s.id, bench.prompt(s)) for s in streamed]


def _big_instance(k: int) -> Instance:
    return Instance(
        id=f"i{k}",
        knowledge_type="table",
        question=f"Who scored {k} goals?",
        answers=[f"Player {k}"],
        header=["Name", "Goals"],
        positive_units=[Row((f"Player {k}", str(k)), 0)],
        noisy_units=[Row((f"Other {i}", str(1000 + i)), i + 1) for i in range(300)],
    )


def _alive() -> int:
    return sum(type(o) is Instance for o in gc.get_objects())


@pytest.mark.parametrize("variant", ["jsonl", "csv"])
def test_a_load_holds_one_instance_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variant: str) -> None:
    """Each instance holds a whole table's units (about 2 MB of JSON over galois/world_1): a run of thousands held
    them all when the progress total was counted over a ``tee`` of the stream before the first sample, whether read
    from a file or built. Now a file's are read one at a time (twice: counted, then laid out), and a build holds at
    most the instances read ahead for the total."""
    count = 3 * READ_AHEAD
    path = tmp_path / "instances.jsonl"
    write_instances((_big_instance(k) for k in range(count)), path)
    if variant == "csv":  # a build: the same instances, made as they are read

        def built(self: SkaBench, *args: Any, **kwargs: Any) -> Iterator[Instance]:
            return (_big_instance(k) for k in range(count))

        monkeypatch.setattr(SkaBench, "stream_instances", built)
    bench = SkaBench({"path": str(path), "testbed": "noise", "budget": "1k", "tokenizer": "regex"})
    gc.collect()
    before = _alive()
    loaded = bench.load(variant, DataContext(), seed=0, limit=None)
    alive = [_alive() - before for _ in loaded]
    assert len(alive) == count
    most = 2 if variant == "jsonl" else READ_AHEAD + 1  # the one laid out and the next read (a build: read ahead)
    assert max(alive) <= most, alive
    assert max(alive[READ_AHEAD + 1:]) <= 2, alive


def test_a_limited_load_builds_only_the_instances_it_reads(
    loaded: tuple[SkaBench, list[Sample]], shared_data: DataContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--limit 5`` builds the first question's instances, not every question's (each holds a whole table's units),
    and its samples begin the whole load."""
    made: list[str] = []
    to_instance = builder.to_instance

    def counted(*args: Any, **kwargs: Any) -> Instance | None:
        made.append(args[3])
        return to_instance(*args, **kwargs)

    monkeypatch.setattr(builder, "to_instance", counted)
    first = list(SkaBench(FAST).load("rfqa", shared_data, seed=0, limit=5))  # at least 5: an instance's stay together
    assert len(first) >= 5 and [s.model_dump() for s in first] == [s.model_dump() for s in loaded[1][:len(first)]]
    assert made and all("-q000-" in instance for instance in made), made
