"""NL, SQL and CoT end to end: oracle scores, iterative retrieval with a paging mock, re-prompts."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from structbench.backends.base import Choice, Request, Response
from structbench.backends.mock import MockBackend
from structbench.benchmarks.rfqa import RFQABenchmark, prompts
from structbench.benchmarks.rfqa.cot import BaseQuery
from structbench.benchmarks.rfqa.database import DatabaseCache, quote
from structbench.contract.benchmark import Attempt, Scored
from structbench.data.sample import Sample, TableGold

pytestmark = pytest.mark.shared


def run(bench: RFQABenchmark, strategy: str, sample: Sample, backend: Any = None) -> Attempt:
    async def generate(request: Request) -> Response:
        if backend is not None:
            return await backend.generate(request)
        return Response(choices=(Choice(text=bench.oracle(sample, request)),))

    return asyncio.run(bench.strategy(strategy).run(sample, generate))


def _base_size(sample: Sample, cache: DatabaseCache) -> int:
    dataset, db_id = sample.meta["db"].split("/", 1)
    db = cache.get(dataset, db_id)
    total = 0
    for data in sample.extra["cot"]:
        base = BaseQuery.from_json(data)
        where = f" WHERE {base.conditions}" if base.conditions else ""
        total += int(str(db.execute(f"SELECT count(*) FROM {quote(base.table)}{where}")[2][0][0]))
    return total


@pytest.mark.parametrize("strategy", ["nl", "sql"])
def test_oracle_scores_one_for_every_sample(
    strategy: str, rfqa_bench: RFQABenchmark, rfqa_samples: list[Sample]
) -> None:
    scored = [rfqa_bench.score(s, run(rfqa_bench, strategy, s), rfqa_bench.strategy(strategy)) for s in rfqa_samples]
    assert len(scored) == 681
    bad = [s.id for s in scored if s.values["cell_f1"] < 1 or s.values["tuple_similarity"] < 1]
    assert bad == []
    agg = rfqa_bench.aggregate(scored)
    assert agg["avg_f1_ts"] == 1.0 and agg["invalid_rate"] == 0.0 and agg["tuple_order"] == 1.0
    assert set(rfqa_bench.metric_names) <= set(agg)


def test_cot_oracle_scores_one(
    rfqa_bench: RFQABenchmark, rfqa_samples: list[Sample], rfqa_cache: DatabaseCache
) -> None:
    """Every sample whose base data is at most 3,000 rows (the rest are joins over 10k-100k-row
    tables, covered by the next test on one of them to keep the suite fast)."""
    small = [s for s in rfqa_samples if _base_size(s, rfqa_cache) <= 3000]
    assert len(small) >= 640
    scored = [rfqa_bench.score(s, run(rfqa_bench, "cot", s), rfqa_bench.strategy("cot")) for s in small]
    bad = [(s.id, s.values["cell_f1"], s.values["tuple_similarity"]) for s in scored if s.score < 1]
    assert bad == []


def test_cot_oracle_on_a_join_over_large_tables(rfqa_bench: RFQABenchmark, rfqa_samples: list[Sample]) -> None:
    sample = next(s for s in rfqa_samples if s.id == "bird_10")
    assert [b["table"] for b in sample.extra["cot"]] == ["book", "book_author", "author"]
    attempt = run(rfqa_bench, "cot", sample)
    assert attempt.artifacts["base_rows"]["book_author"] > 10000
    assert rfqa_bench.score(sample, attempt, rfqa_bench.strategy("cot")).score == 1.0


def test_cot_prompt_pushes_simple_conditions(rfqa_samples: list[Sample]) -> None:
    by_id = {s.id: s for s in rfqa_samples}
    bases = [BaseQuery.from_json(d) for d in by_id["galois_15"].extra["cot"]]
    assert [b.text for b in bases] == [
        "select lake_name, area_squared_km, state_name from usa_lake "
        "where state_name = 'california' and area_squared_km > 450"
    ]
    # a function of a column is not a simple condition: it is left to the in-memory step
    bird_20 = BaseQuery.from_json(by_id["bird_20"].extra["cot"][0])
    assert bird_20.conditions is None and "release_date" in bird_20.columns


def _pager(gold: TableGold, page: int) -> Any:
    calls: list[Request] = []

    def reply(request: Request) -> str:
        calls.append(request)
        assert request.messages is not None
        turn = sum(m.role == "assistant" for m in request.messages)
        if turn:
            assert request.messages[-1].content == prompts.ITERATIVE
        rows = gold.rows[turn * page : (turn + 1) * page]
        return json.dumps([dict(zip(gold.columns, r, strict=True)) for r in rows]) if rows else "{}"

    return MockBackend(reply=reply), calls


@pytest.mark.parametrize("strategy", ["nl", "sql"])
def test_iterative_retrieval_pages_until_empty(
    strategy: str, rfqa_bench: RFQABenchmark, rfqa_samples: list[Sample]
) -> None:
    sample = next(s for s in rfqa_samples if isinstance(s.gold, TableGold) and len(s.gold.rows) == 30)
    assert isinstance(sample.gold, TableGold)
    backend, calls = _pager(sample.gold, 7)
    attempt = run(rfqa_bench, strategy, sample, backend)
    assert len(calls) == 6  # pages of 7, 7, 7, 7, 2, then the empty answer
    assert [r["new_rows"] for r in attempt.artifacts["rounds"]] == [7, 7, 7, 7, 2, 0]
    assert rfqa_bench.score(sample, attempt, rfqa_bench.strategy(strategy)).score == 1.0
    # a predictions file holds only the output text: it scores the same
    again = rfqa_bench.score(sample, Attempt.from_prediction(attempt.output), rfqa_bench.strategy(strategy))
    assert again.score == 1.0


def test_iterations_stop_at_the_limit(rfqa_bench: RFQABenchmark, rfqa_samples: list[Sample]) -> None:
    sample = next(s for s in rfqa_samples if isinstance(s.gold, TableGold) and len(s.gold.rows) >= 20)
    assert isinstance(sample.gold, TableGold)
    backend, calls = _pager(sample.gold, 1)
    attempt = run(rfqa_bench, "nl", sample, backend)
    assert len(calls) == 11  # the first answer + 10 follow-ups
    assert len(json.loads(attempt.output)) == 11
    limited = RFQABenchmark({"iterations": 2})
    backend, calls = _pager(sample.gold, 1)
    run(limited, "nl", sample, backend)
    assert len(calls) == 3


def test_invalid_json_gets_one_reprompt(rfqa_bench: RFQABenchmark, rfqa_samples: list[Sample]) -> None:
    sample = rfqa_samples[0]
    backend = MockBackend(default="Sorry, I cannot answer that.")
    attempt = run(rfqa_bench, "sql", sample, backend)
    assert len(backend.calls) == 2
    assert backend.calls[1].messages is not None and backend.calls[1].messages[-1].content == prompts.INVALID_JSON
    scored = rfqa_bench.score(sample, attempt, rfqa_bench.strategy("sql"))
    assert scored.values["invalid"] == 1.0 and scored.score == 0.0
    fixed = MockBackend(
        rules=[],
        reply=lambda r: (
            "{}"
            if r.messages and r.messages[-1].content == prompts.ITERATIVE
            else ("oops" if len(r.messages or ()) == 1 else "[]")
        ),
    )
    attempt = run(rfqa_bench, "sql", sample, fixed)
    scored = rfqa_bench.score(sample, attempt, rfqa_bench.strategy("sql"))
    assert attempt.artifacts["valid"] and scored.values["invalid"] == 0.0


def _first_prompts(bench: RFQABenchmark, sample: Sample, method: str) -> list[str]:
    backend = MockBackend(default="{}")
    run(bench, method, sample, backend)
    firsts = [c.messages[0].content for c in backend.calls if c.messages and len(c.messages) == 1]
    assert all(c.params.response_format is None for c in backend.calls)
    return firsts


def _schema_after(text: str, marker: str) -> dict[str, Any]:
    schema, _ = json.JSONDecoder().raw_decode(text.split(marker, 1)[1])
    assert isinstance(schema, dict)
    return schema


def test_start_prompts_are_the_released_codes_by_default(rfqa_bench: RFQABenchmark, rfqa_samples: list[Sample]) -> None:
    sample = next(s for s in rfqa_samples if s.id == "galois_43")
    (nl,) = _first_prompts(rfqa_bench, sample, "nl")
    assert nl.startswith(f"Question: {sample.question}\nAssume you have access to a dataset with the following ")
    assert nl.endswith("}\n\nRespond with JSON only. Don't add any comment")
    schema = _schema_after(nl, "schema:\n")
    assert schema["type"] == "array" and list(schema["items"]["properties"]) == ["name", "party"]
    (sql,) = _first_prompts(rfqa_bench, sample, "sql")
    assert sql.startswith(
        "List the result of the SQL query:\nSELECT DISTINCT p.name, p.party FROM target.world_presidents p"
    )
    assert ".\nAssume you have access to a dataset with the following schema:\n{" in sql
    assert sql.endswith("}\n\nRespond with a JSON object containing only the answer. Do not include explanations "
                        "or comments.")
    cot = _first_prompts(rfqa_bench, sample, "cot")
    assert cot and all(
        c.startswith("Given the following query, populate the table with actual values.\nquery: select ")
        and ".\nRespond with JSON only. Don't add any comment.\nUse the following JSON schema:\n{" in c
        for c in cot
    )


def test_paper_wording_is_figures_5_to_7(rfqa_samples: list[Sample]) -> None:
    bench = RFQABenchmark({"prompt_wording": "paper"})
    sample = next(s for s in rfqa_samples if s.id == "galois_43")
    bare = next(s for s in rfqa_samples if s.question.strip()[-1].isalnum())
    (nl,) = _first_prompts(bench, bare, "nl")
    # Figure 5: "NL Question. Respond with JSON only. ..." (a period the question lacks is added)
    assert nl.startswith(f"{bare.question.strip()}. Respond with JSON only. Don't add any comments. Use the following")
    asked = next(s for s in rfqa_samples if s.question.rstrip().endswith("?"))
    (nl,) = _first_prompts(bench, asked, "nl")
    assert nl.startswith(f"{asked.question.strip()} Respond with JSON only.")  # no "?."
    (sql,) = _first_prompts(bench, sample, "sql")
    assert sql.startswith(
        "List the results of the SQL query: SELECT DISTINCT p.name, p.party FROM target.world_presidents p"
    )
    assert "Respond with JSON only. Don't add any comments. Use the following JSON schema: " in sql
    schema = json.loads(sql.split("JSON schema: ", 1)[1].rstrip("."))
    assert schema["type"] == "array" and list(schema["items"]["properties"]) == ["name", "party"]
    cot = _first_prompts(bench, sample, "cot")
    assert cot and all(
        c.startswith("Given the following query, populate the table with actual values. query: select ")
        and ". Respond with JSON only. Don't add any comments. Use the following JSON schema: {" in c
        for c in cot
    )


def test_structured_output_sends_the_schema(rfqa_samples: list[Sample]) -> None:
    sample = next(s for s in rfqa_samples if s.id == "galois_43")
    structured = RFQABenchmark({"structured_output": "true"})
    backend = MockBackend(default="{}")
    run(structured, "nl", sample, backend)
    assert backend.calls[0].params.response_format is not None


def test_breakdowns_and_export(rfqa_bench: RFQABenchmark, rfqa_samples: list[Sample]) -> None:
    scored: list[Scored] = [rfqa_bench.score(s, Attempt(output="[]"), rfqa_bench.strategy("nl")) for s in rfqa_samples]
    extra = rfqa_bench.extra_results(scored)
    assert extra["gold"]["counts"]["missing_table"] == 15
    by_type = extra["by_query_complexity"]
    # over the 681 samples with gold (Figure 1(b) counts all 696: ORDER BY 17, LIMIT 11)
    assert by_type["ORDER BY"]["n"] == 16 and by_type["LIMIT"]["n"] == 10
    assert sum(by_type[c]["n"] for c in by_type if c.startswith(("SELECT", "WHERE"))) == 681
    assert {s.meta["output_type"] for s in scored} == {"numerical", "categorical", "mixed"}
    fields = rfqa_bench.export_fields(rfqa_samples[0])
    assert set(fields) == {"sql", "question", "schema", "gold"}
    assert fields["gold"]["columns"] == fields["schema"]
