"""The independent check: labels read from hand-written evidence in every form the release uses."""

from __future__ import annotations

from typing import Any

import pytest

from structbench.benchmarks.structfact.generated.claims import (
    Aggregate,
    And,
    Arith,
    Best,
    Cell,
    Compare,
    Count,
    Year,
    cell,
    compare,
    from_json,
    to_json,
)
from structbench.benchmarks.structfact.generated.verify import Ambiguous, read_date, read_number, verify

MEDALS = """### medals
| Nation    | Gold | Silver | Founded      |
| --------- | ---- | ------ | ------------ |
| Vellmar   | 9    | 8      | 1811-07-05   |
| Ostrin    | 5    | N/A    | Jul 28, 1821 |
| Kaldera   | 0    | 1      | 20 July 1810 |"""

MEDALS_FULL = MEDALS.replace("N/A", "8")


def gold(nation: str) -> Cell:
    return cell("medals", "Nation", nation, "Gold")


def label(evidence: list[str], claim: Compare | And) -> str:
    return verify(evidence, to_json(claim))


def test_reads_numbers_and_dates_as_the_claim_format_says() -> None:
    assert read_number("1,234.5") == 1234.5
    assert read_number("-$1,200") == -1200.0
    assert read_number("+0.2%") == 0.2
    assert read_number("12abc") is None and read_number("") is None
    assert read_date("Dec 21, 1937") == read_date("21 December 1937") == read_date("1937-12-21") == "1937-12-21"
    assert read_date("December 21, 1937") == "1937-12-21"
    assert read_date("1937") is None


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        (compare(gold("Kaldera"), "=", 0.0, "number"), "YES"),
        (compare(gold("Kaldera"), "=", 1.0, "number"), "NO"),
        (compare(gold("Chile"), "=", 0.0, "number"), "NOT SURE ENOUGH"),  # no such row
        (compare(cell("medals", "Nation", "Ostrin", "Silver"), "=", 8.0, "number"), "NOT SURE ENOUGH"),  # N/A
        (compare(cell("medals", "Nation", "Ostrin", "Bronze"), "=", 8.0, "number"), "NOT SURE ENOUGH"),  # no column
        (compare(cell("other", "Nation", "Ostrin", "Gold"), "=", 5.0, "number"), "NOT SURE ENOUGH"),  # no table
        (compare(gold("Vellmar"), ">", gold("Ostrin"), "number"), "YES"),
        (compare(cell("medals", "Nation", "Ostrin", "Founded"), "=", "1821-07-28", "date"), "YES"),
        (compare(cell("medals", "Nation", "Kaldera", "Founded"), "<", cell("medals", "Nation", "Ostrin", "Founded"),
                 "date"), "YES"),
        (compare(Year(of=cell("medals", "Nation", "Vellmar", "Founded")), "=", 1811.0, "number"), "YES"),
        (compare(Aggregate(fn="sum", table="medals", column="Gold"), "=", 14.0, "number"), "YES"),
        (compare(Aggregate(fn="avg", table="medals", column="Gold"), "=", 4.67, "number", 0.005), "YES"),
        (compare(Aggregate(fn="sum", table="medals", column="Silver"), "=", 17.0, "number"), "NOT SURE ENOUGH"),
        (compare(Count(table="medals", column="Gold", cmp=">", value=0.0), "=", 2.0, "number"), "YES"),
        (compare(Best(fn="max", table="medals", key="Nation", column="Gold"), "=", "Vellmar", "text"), "YES"),
        (compare(Best(fn="min", table="medals", key="Nation", column="Gold"), "=", "Ostrin", "text"), "NO"),
        (compare(Best(fn="max", table="medals", key="Nation", column="Silver"), "=", "Vellmar", "text"),
         "NOT SURE ENOUGH"),
        (compare(Arith(fn="sub", left=gold("Vellmar"), right=gold("Ostrin")), "=", 4.0, "number"), "YES"),
        (compare(Arith(fn="share", left=gold("Ostrin"), right=Aggregate(fn="sum", table="medals", column="Gold")), ">",
                 35.0, "number"), "YES"),
        (compare(Arith(fn="absdiff", left=Year(of=cell("medals", "Nation", "Kaldera", "Founded")),
                       right=Year(of=cell("medals", "Nation", "Ostrin", "Founded"))), "=", 11.0, "number"), "YES"),
    ],
)
def test_table_claims(claim: Compare, expected: str) -> None:
    assert label([MEDALS], claim) == expected


def test_kleene_and() -> None:
    true = compare(gold("Ostrin"), "=", 5.0, "number")
    false = compare(gold("Ostrin"), "=", 6.0, "number")
    unknown = compare(gold("Chile"), "=", 1.0, "number")
    assert label([MEDALS], And(parts=[true, true])) == "YES"
    assert label([MEDALS], And(parts=[true, unknown])) == "NOT SURE ENOUGH"
    assert label([MEDALS], And(parts=[false, unknown])) == "NO"


@pytest.mark.parametrize(
    "evidence",
    [
        ["| Ostrin |\n| --- | --- |\n| Gold | 5 |\n| Silver | 8 |"],  # infobox
        ["### Ostrin\n* Gold: 5\n* Silver: 8"],  # list under a heading
        ["(Ostrin, Gold, 5)\n(Ostrin, Silver, 8)"],  # triples
        ["The Gold of Ostrin is 5. The Silver of Ostrin is 8."],  # text
        ["### medals\n| Nation | G. |\n| --- | --- |\n| Ostrin | 5 |", "### Abbreviations\n* G.: Gold"],
    ],
)
def test_every_form_states_facts(evidence: list[str]) -> None:
    assert label(evidence, compare(gold("Ostrin"), "=", 5.0, "number")) == "YES"
    assert label(evidence, compare(gold("Ostrin"), "=", 4.0, "number")) == "NO"
    assert label(evidence, compare(gold("Chile"), "=", 5.0, "number")) == "NOT SURE ENOUGH"


def test_text_sentences_are_found_only_at_sentence_starts() -> None:
    text = ["The capital of New York is Albany. The population of St. Louis is 281754."]
    capital = cell("t", "name", "York", "capital")
    assert label(text, compare(capital, "=", "Albany", "text")) == "NOT SURE ENOUGH"
    assert label(text, compare(cell("t", "name", "New York", "capital"), "=", "Albany", "text")) == "YES"
    population = cell("t", "name", "St. Louis", "population")
    assert label(text, compare(population, "=", 281754.0, "number")) == "YES"


def test_multi_hop_follows_values_across_tables_and_triples() -> None:
    cities = "### city\n| name | countrycode |\n| --- | --- |\n| Kabul | AFG |\n| Lyon | FRA |"
    countries = "### country\n| code | continent |\n| --- | --- |\n| AFG | Asia |"
    chain = Cell(table="country", key="code", entity=cell("city", "name", "Kabul", "countrycode"), column="continent")
    assert label([cities, countries], compare(chain, "=", "Asia", "text")) == "YES"
    assert label([cities, countries], compare(chain, "=", "Europe", "text")) == "NO"
    broken = Cell(table="country", key="code", entity=cell("city", "name", "Lyon", "countrycode"), column="continent")
    assert label([cities, countries], compare(broken, "=", "Europe", "text")) == "NOT SURE ENOUGH"
    graph = ["(Kabul, countrycode, AFG)\n(AFG, continent, Asia)"]
    assert label(graph, compare(chain, "=", "Asia", "text")) == "YES"


def test_contradicting_or_tied_evidence_is_an_error() -> None:
    twice = ["(Ostrin, Gold, 5)\n(Ostrin, Gold, 6)"]
    with pytest.raises(Ambiguous):
        label(twice, compare(gold("Ostrin"), "=", 5.0, "number"))
    tied = "### medals\n| Nation | Gold |\n| --- | --- |\n| A | 3 |\n| B | 3 |"
    with pytest.raises(Ambiguous):
        label([tied], compare(Best(fn="max", table="medals", key="Nation", column="Gold"), "=", "A", "text"))


def test_the_same_fact_stated_twice_alike_is_fine() -> None:
    both = [MEDALS_FULL, "The Silver of Ostrin is 8."]
    assert label(both, compare(cell("medals", "Nation", "Ostrin", "Silver"), "=", 8.0, "number")) == "YES"
    masked = [MEDALS, "The Silver of Ostrin is 8."]  # the text supplies what the table masks
    assert label(masked, compare(cell("medals", "Nation", "Ostrin", "Silver"), "=", 8.0, "number")) == "YES"


def test_claims_round_trip_as_json() -> None:
    claim = And(parts=[
        compare(Best(fn="max", table="medals", key="Nation", column="Gold"), "=", "Vellmar", "text"),
        compare(Arith(fn="sub", left=gold("Vellmar"), right=gold("Ostrin")), "=", 4.0, "number", 0.5),
    ])
    data: dict[str, Any] = to_json(claim)
    assert data["op"] == "and" and data["parts"][1]["tol"] == 0.5
    assert from_json(data) == claim
