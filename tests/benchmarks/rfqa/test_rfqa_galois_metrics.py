"""``scorer=galois`` (the presets): cell F1 and tuple similarity as galois scored the published runs, on small cases
that reproduce each of its quirks, with structbench's corrected scores beside; the published runs' prompts; their
reasoning replies read as written. ``benchmarks/rfqa_published.py`` compares with galois' own scores query by query.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from structbench.backends.base import GenerationParams, Request, Response, reply_choice
from structbench.benchmarks.rfqa import RFQABenchmark, galois, galois_metrics, prompts, published_runs
from structbench.benchmarks.rfqa.gold import GoldTable
from structbench.benchmarks.rfqa.paper import TABLE2
from structbench.contract.benchmark import corrected_scored
from structbench.core.errors import UsageError
from structbench.data.sample import Sample
from structbench.runfiles.results import compute_result
from structbench.runner.export import answers_of

PRESET = dict(TABLE2.preset.options)


def sample(qid: str, db: str, table: str, columns: list[str], types: list[str], rows: list[list[Any]]) -> Sample:
    """A release-like sample: its gold, the database, the table galois' scan reads and which gold columns galois
    held as text (as ``make_sample`` builds them)."""
    bench = RFQABenchmark()
    sql = f"SELECT {', '.join(columns)} FROM {table}"
    as_text = published_runs.text_columns(sql, db, columns)
    return bench.build_sample(sample_id=qid, variant="all", task=qid.split("_")[0], question="q?", sql=sql,
                              table=GoldTable(columns=columns, types=types, rows=rows), title=table, schema=None,
                              meta={"db": db, "gold_status": "ok"},
                              extra={"scanned_table": table, "gold_as_text": as_text})


def scores(bench: RFQABenchmark, s: Sample, output: str, strategy: str = "nl") -> tuple[float, float, float, float]:
    """(F1, TS) under ``bench``'s scoring and (F1, TS) of structbench's corrected scoring of the same output."""
    scored = bench.score(s, answers_of(output)[0], bench.strategy(strategy))
    twin = corrected_scored(scored)
    assert twin is not None
    return (scored.values["cell_f1"], scored.values["tuple_similarity"], twin.values["cell_f1"],
            twin.values["tuple_similarity"])


def test_ts_counts_a_row_only_where_its_most_distinct_value_is_the_golds_exactly() -> None:
    """spider1_3: gold 121590 (a nullable REAL: text in galois' gold), the published reply 121669: within 10%, so
    F1 is 1, but galois' tuple similarity compares the key attribute's normalized text exactly (TS 0); structbench's
    TS matches it (1). A number is written "%.2f", so only the gold's own text is a match."""
    s = sample("spider1_3", "spider1/geo", "usa_state", ["area_squared_miles"], ["DOUBLE"], [[121590.0]])
    assert s.extra["gold_as_text"] == [True]
    reply = '[{"state_name": "New Mexico", "area_squared_miles": 121669}]'
    assert scores(RFQABenchmark(PRESET), s, reply) == (1.0, 0.0, 1.0, 1.0)
    assert scores(RFQABenchmark(PRESET), s, '[{"area_squared_miles": 121590}]')[:2] == (1.0, 0.0)
    assert scores(RFQABenchmark(PRESET), s, '[{"area_squared_miles": "121590"}]')[:2] == (1.0, 1.0)
    # a column declared not nullable (actor.birth_year) is a number in the gold: a JSON number matches, a text not
    year = sample("spider1_42", "spider1/imdb", "actor", ["birth_year"], ["BIGINT"], [[1976]])
    assert year.extra["gold_as_text"] == [False]
    assert scores(RFQABenchmark(PRESET), year, '[{"birth_year": 1976}]')[:2] == (1.0, 1.0)
    assert scores(RFQABenchmark(PRESET), year, '[{"birth_year": "1976"}]')[:2] == (1.0, 0.0)


def test_an_expected_zero_never_matches() -> None:
    """spider1_7: |e - a| / e is NaN for e = 0, so galois scores 0 against 0 as a miss (0/0); structbench 1/1."""
    s = sample("spider1_7", "spider1/geo", "usa_highlow", ["lowest_elevation_in_meters"], ["BIGINT"], [[0]])
    reply = '[{"lowest_elevation_in_meters": "0", "state_name": "Pennsylvania"}]'
    assert scores(RFQABenchmark(PRESET), s, reply) == (0.0, 0.0, 1.0, 1.0)
    assert not galois_metrics.GaloisRule().matches("0", "0")
    assert galois_metrics.GaloisRule().matches("0", "0.0") is False


def test_numbers_written_with_two_decimals_are_other_cells() -> None:
    """``%.2f``: a reply's 424242 and 424242.0 are two cells of the set ("424242", "424242.00"), where structbench
    reads one number; precision counts both."""
    s = sample("qatch_1", "qatch/airport", "airport", ["n"], ["BIGINT"], [[424242]])
    reply = '[{"n": 424242}, {"n": 424242.0}, {"n": 500000}]'
    f1, _, f1_ours, _ = scores(RFQABenchmark(PRESET), s, reply)
    assert f1 == pytest.approx(2 * (2 / 3) / (2 / 3 + 1))  # precision 2/3
    assert f1_ours == pytest.approx(2 * 0.5 / 1.5)  # precision 1/2
    assert galois_metrics.normalize("424242.0") == "424242.00" and galois_metrics.normalize("424242") == "424242"
    assert galois_metrics.normalize(2.675) == "2.68"  # Java rounds the shortest digits half up
    assert galois_metrics.normalize("10 May") == "10000000"  # a shorthand found anywhere in a text
    assert galois_metrics.normalize("Café\n") == "café"  # accents kept at the time


def test_an_integer_beyond_any_float_in_a_reply_is_a_cell_under_both_scorers() -> None:
    """A model's JSON may hold a number of 400 digits: galois reads it as Java converts it to a double (an infinity,
    written ``Infinity``), structbench's reading as ``1e400`` (not finite: NULL); either way it is a returned cell
    that matches nothing, not a scoring failure."""
    s = sample("qatch_1", "qatch/airport", "airport", ["n"], ["BIGINT"], [[424242]])
    reply = '[{"n": ' + "9" * 400 + '}, {"n": 424242}]'
    f1, _, f1_ours, _ = scores(RFQABenchmark(PRESET), s, reply)
    assert f1 == pytest.approx(2 / 3) and f1_ours == pytest.approx(2 / 3)  # precision 1/2, recall 1
    assert galois_metrics.normalize(10**400) == "Infinity" and galois_metrics.normalize(-(10**400)) == "-Infinity"


def test_tuple_similarity_reads_the_returned_list_once() -> None:
    """``computeMatches``: the returned tuples of a key value are read once for all its expected tuples, so one
    skipped for the first expected tuple is not seen for the second."""
    rule = galois_metrics.GaloisRule()
    expected = [{"k": "a", "v": "x"}, {"k": "a", "v": "y"}, {"k": "b", "v": "x"}, {"k": "c", "v": "x"}]
    assert galois_metrics.key_attribute(expected) == "k"  # 3 distinct values against 2
    others = [{"k": "b", "v": "x"}, {"k": "c", "v": "x"}]
    swapped = [{"k": "a", "v": "y"}, {"k": "a", "v": "x"}, *others]
    assert galois_metrics.tuple_similarity(expected, swapped, rule) == 0.75
    in_order = [{"k": "a", "v": "x"}, {"k": "a", "v": "y"}, *others]
    assert galois_metrics.tuple_similarity(expected, in_order, rule) == 1.0
    # a returned tuple without the key attribute is never compared; one with only the key matches
    assert galois_metrics.tuple_similarity(expected, [{"v": "x"}, {"k": "b"}], rule) == 0.25


def test_the_key_attribute_is_the_first_of_a_tie_in_java_hashmap_order() -> None:
    order = galois.hashmap_order(["state_name", "population", "area_squared_miles", "country_name", "capital",
                                  "density"])
    assert order == ["area_squared_miles", "capital", "density", "state_name", "country_name", "population"]
    expected = [{"b": "1", "a": "2"}, {"b": "3", "a": "4"}]
    assert galois_metrics.key_attribute(expected) == galois.hashmap_order(["b", "a"])[0] == "a"


def test_cot_is_left_unscored_on_the_queries_galois_did_not_score() -> None:
    """The paper's CoT means are over 620 queries: under the presets a CoT sample of one of the 76 others is scored
    but left out of the averages, and said so; NL is not; structbench's own scoring counts it."""
    assert len(published_runs.COT_UNSCORED) == 76 and "bird_39" in published_runs.COT_UNSCORED
    bench = RFQABenchmark(PRESET)
    left = sample("bird_39", "bird/mondial_geo", "desert", ["name"], ["VARCHAR"], [["Angola"]])
    kept = sample("bird_1", "bird/mondial_geo", "desert", ["name"], ["VARCHAR"], [["Angola"]])
    cot = [bench.outcome(s, answers_of('[{"name": "Angola"}]')[0], bench.strategy("cot")) for s in (left, kept)]
    nl = [bench.outcome(s, answers_of('[{"name": "Chad"}]')[0], bench.strategy("nl")) for s in (left, kept)]
    entry = compute_result(bench, "all", "cot", "m", cot)
    assert entry.n == 2 and entry.metrics["cell_f1"] == 1.0
    assert {"reason": "CoT queries galois' published runs did not score, left out of the averages as the paper's CoT "
            "means leave them out (--option scorer=galois)", "count": 1} in entry.extra["excluded"]
    wrong = [bench.outcome(s, answers_of('[{"name": "Chad"}]')[0], bench.strategy("cot")) for s in (left, kept)]
    assert compute_result(bench, "all", "cot", "m", [wrong[0], cot[1]]).metrics["cell_f1"] == 1.0
    assert compute_result(bench, "all", "cot", "m", [cot[0], wrong[1]]).metrics["cell_f1"] == 0.0
    assert compute_result(bench, "all", "nl", "m", nl).metrics["cell_f1"] == 0.0
    assert entry.extra["corrected"]["metrics"]["cell_f1"] == 1.0  # both counted, both right


def test_bird_51_is_scored_against_the_gold_galois_had() -> None:
    """galois held the Nile's empty length as an empty text, so its gold for the longest Mediterranean river was
    the Ebro ('925.0' first among texts); structbench's gold (NULL first) is the Nile, scored beside."""
    s = sample("bird_51", "bird/mondial_geo", "river", ["name"], ["VARCHAR"], [["Nile"]])
    assert scores(RFQABenchmark(PRESET), s, '[{"name": "Nile"}]') == (0.0, 0.0, 1.0, 1.0)
    assert scores(RFQABenchmark(PRESET), s, '[{"name": "Ebro"}]') == (1.0, 1.0, 0.0, 0.0)


def test_a_numeric_cell_that_does_not_type_is_null_or_drops_its_tuple() -> None:
    """``checkTupleTypes`` with galois' declarations: a nullable numeric attribute's "1,500" becomes NULL; where the
    attribute is not nullable the tuple is dropped (the last one kept, as the scan's iterator returns it)."""
    schema = published_runs.table_schema("spider1/geo", "usa_highlow") or ()
    declared = [(a.name, a.type, a.nullable) for a in schema]
    assert ("lowest_elevation_in_meters", "INTEGER", True) in declared
    rows = galois_metrics.scanned_tuples([{"aid": "x1"}, {"aid": "2"}, {"aid": "x3"}], [("aid", "INTEGER", False)])
    assert rows == [{"aid": "2"}, {"aid": "x3"}]
    nullable = galois_metrics.scanned_tuples([{"a": "1,500"}, {"a": None}], [("a", "REAL", True)])
    assert nullable == [{"a": galois_metrics.JavaNull("null")}] * 2  # a NULL's text does not type either


def test_scorer_galois_needs_galois_reading() -> None:
    with pytest.raises(UsageError, match="scorer=galois scores the tuples galois read: add reading=galois"):
        RFQABenchmark({"scorer": "galois"})
    with pytest.raises(UsageError, match="string_rule applies to structbench's scorer"):
        RFQABenchmark({"reading": "galois", "scorer": "galois", "string_rule": "published"})


def test_the_published_prompts_send_the_whole_first_tables_schema_in_hashmap_order() -> None:
    """The published runs' NL and SQL prompts, as galois' cache of them holds them (spider1_7)."""
    declared = published_runs.table_schema("spider1/geo", "usa_highlow")
    assert declared is not None
    schema = prompts.published_schema_text("usa_highlow", [(a.name, a.type) for a in declared])
    assert schema == (
        '{"title":"usa_highlow","type":"array","items":{"type":"object","properties":{"lowest_point":{"title":'
        '"lowest_point","type":"string"},"highest_point":{"title":"highest_point","type":"string"},'
        '"lowest_elevation_in_meters":{"title":"lowest_elevation_in_meters","type":"integer"},"state_name":{"title":'
        '"state_name","type":"string"},"highest_elevation_in_meters":{"title":"highest_elevation_in_meters","type":'
        '"integer"}}}}')
    nl = prompts.published_prompt("nl", "what is the lowest elevation in pennsylvania", schema)
    assert nl == ("what is the lowest elevation in pennsylvania\nRespond with JSON only. Don't add any comment.\n"
                  f"Use the following JSON schema:\n{schema}")
    sql = prompts.published_prompt("sql", "SELECT x FROM t;", schema)
    assert sql.startswith("List the result of the SQL query:\nSELECT x FROM t;.\nRespond with JSON only.\n")


# --- reasoning replies: galois read them whole ------------------------------------------------------------------


CUT_OFF = '<think>The table is [{"state_name": "Pennsylvania"}] I think, let me che'
"""A thought cut off by the token budget, holding the right table."""
CLOSE_ONLY = '[{"state_name": "Ohio"}] hmm</think>[{"state_name": "Pennsylvania"}]'
"""A reply whose opening tag the chat template wrote: only ``</think>``, a wrong table in the thought."""


def highlow() -> Sample:
    return sample("spider1_9", "spider1/geo", "usa_highlow", ["state_name"], ["VARCHAR"], [["Pennsylvania"]])


def test_a_prediction_is_read_as_written_under_the_preset_and_never_its_thought_beside() -> None:
    """Under the preset galois' reading decides, on the raw reply: the cut-off thought's table is read (1/1), and
    in a reply with only ``</think>`` the thought's wrong table comes first (0/0); structbench's corrected scoring
    reads the answers alone (0/0 and 1/1)."""
    preset = RFQABenchmark(PRESET)
    assert scores(preset, highlow(), CUT_OFF) == (1.0, 1.0, 0.0, 0.0)
    assert scores(preset, highlow(), CLOSE_ONLY) == (0.0, 0.0, 1.0, 1.0)


def test_a_run_under_the_preset_reads_replies_as_the_model_wrote_them() -> None:
    """The same two replies from a backend (the thought taken apart as every backend does): the preset's
    conversation reads them whole, structbench's reading of the recorded rounds reads the answers."""
    preset = RFQABenchmark(PRESET)
    def model(replies: list[str]) -> Any:
        queue = iter(replies)

        async def generate(request: Request) -> Response:
            return Response(choices=(reply_choice(next(queue), GenerationParams(max_tokens=64)),))

        return generate

    for reply, paper, ours in ((CUT_OFF, 1.0, 0.0), (CLOSE_ONLY, 0.0, 1.0)):
        generate = model([reply, "[]"])
        s = highlow()
        s.extra["published_schema"] = '{"title":"usa_highlow"}'
        attempt = asyncio.run(preset.strategy("nl").run(s, generate))
        assert attempt.artifacts["rounds"][0]["reply"] == reply
        assert "<think>" not in attempt.artifacts["rounds"][0].get("answer", "")
        scored = preset.score(s, attempt, preset.strategy("nl"))
        twin = corrected_scored(scored)
        assert twin is not None
        assert (scored.values["cell_f1"], twin.values["cell_f1"]) == (paper, ours), reply
        assert json.loads(attempt.output) == ([{"state_name": "Pennsylvania"}] if paper else
                                              [{"state_name": "Ohio"}])


def test_a_missing_prediction_of_an_unscored_cot_query_is_left_out_as_any_answer_would_be() -> None:
    """``score --missing wrong`` (the default) refuses only where an empty reply is what the averages leave out; a
    CoT query galois did not score is left out whatever the reply, so its missing prediction is not refused."""
    from pathlib import Path

    from structbench.runner.export import score_predictions

    bench = RFQABenchmark(PRESET)
    left = sample("bird_39", "bird/mondial_geo", "desert", ["name"], ["VARCHAR"], [["Angola"]])
    kept = sample("bird_1", "bird/mondial_geo", "desert", ["name"], ["VARCHAR"], [["Angola"]])
    entry = score_predictions(bench, "all", [left, kept], bench.strategy("cot"), {"bird_1": '[{"name": "Angola"}]'},
                              source=Path("p.jsonl"))
    assert entry.n == 2 and entry.missing == ["bird_39"] and entry.metrics["cell_f1"] == 1.0
