"""``structbench generate tablebench``: a small seeded TableBench in the Hub repository's layout.

Four invented tables (a league, a transport network by year, a shop's products, sensor readings with one outlier)
are drawn from the seed; each is asked the questions of its kind, so the set holds every question subtype (18)
and a chart of every chart type (8), with answers computed from the table. Every question is written to
``TableBench.jsonl`` and, with its instruction (``prompts.instruction``), to ``TableBench_{DP,TCoT,SCoT,PoT}.jsonl``,
under ``OUT/tablebench/``: ``--data-dir OUT`` reads it as the release.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from structbench.benchmarks.tablebench.prompts import instruction
from structbench.benchmarks.tablebench.source import INSTRUCTION_FILES, QUESTIONS_FILE, SOURCE
from structbench.benchmarks.tablebench.taxonomy import (
    DATA_ANALYSIS,
    FACT_CHECKING,
    INSTRUCTION_TYPES,
    NUMERICAL_REASONING,
    VISUALIZATION,
)
from structbench.core.atomic import write_texts_atomic
from structbench.core.bounds import at_most

PARTS = ("Ash", "Brook", "Cal", "Dun", "Elm", "Fen", "Glen", "Hart", "Ivy", "Kings", "Lark", "Mill", "North", "Oak",
         "Pine", "Red", "Stone", "Thorn", "West", "Wick")
ENDS = ("ford", "field", "ton", "bury", "dale", "mere", "wood", "holm", "by", "stead")
TEAMS = ("Rovers", "United", "Athletic", "Wanderers", "Rangers", "Albion", "Town", "City", "Harriers", "Celtic")
PRODUCTS = ("lamp", "kettle", "chair", "blanket", "mug", "clock", "rug", "vase", "stool", "mirror")
CATEGORIES = ("home", "kitchen", "decor")


@dataclass(frozen=True)
class Item:
    """One generated question."""

    qtype: str
    qsubtype: str
    table: dict[str, Any]
    question: str
    answer: str
    chart_type: str | None = None


def number(value: float) -> str:
    """An answer's number: a whole number as such, else at most two decimals, trailing zeros dropped."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _names(rng: random.Random, n: int, make: Callable[[random.Random], str]) -> list[str]:
    names: list[str] = []
    while len(names) < n:
        name = make(rng)
        if name not in names:
            names.append(name)
    return names


def _place(rng: random.Random) -> str:
    return rng.choice(PARTS) + rng.choice(ENDS)


def _distinct(rng: random.Random, n: int, low: int, high: int) -> list[int]:
    return rng.sample(range(low, high + 1), n)


def league(rng: random.Random) -> Iterator[Item]:
    """A league table: fact checking, numerical reasoning, bar, horizontal bar and radar charts."""
    n = 8
    clubs = _names(rng, n, lambda r: f"{_place(r)} {r.choice(TEAMS)}")
    while True:
        wins = [rng.randint(2, 14) for _ in range(n)]
        draws = [rng.randint(1, 18 - w) for w in wins]
        losses = [20 - w - d for w, d in zip(wins, draws, strict=True)]
        points = [3 * w + d for w, d in zip(wins, draws, strict=True)]
        if len(set(points)) == n and len(set(wins)) == n and len(set(losses)) == n and min(losses) > 0:
            break
    order = sorted(range(n), key=lambda i: -points[i])
    cities = _names(rng, n, _place)
    founded = [rng.randint(1870, 1990) for _ in range(n)]
    rows: list[list[Any]] = [[rank + 1, clubs[i], cities[i], 20, wins[i], draws[i], losses[i], points[i], founded[i]]
            for rank, i in enumerate(order)]
    columns = ["rank", "club", "city", "played", "wins", "draws", "losses", "points", "founded"]
    table: dict[str, Any] = {"columns": columns, "data": rows}
    col: dict[str, list[Any]] = {name: [row[k] for row in rows] for k, name in enumerate(table["columns"])}
    a, b = rng.sample(range(n), 2)
    top_wins = max(range(n), key=lambda i: col["wins"][i])
    threshold = sorted(col["points"])[n // 2]
    win_cut = sorted(col["wins"])[n // 2 - 1]
    strong = [p for p, w in zip(col["points"], col["wins"], strict=True) if w > win_cut]
    by_wins = sorted(range(n), key=lambda i: -col["wins"][i])[:3]
    hi, lo = (a, b) if col["points"][a] > col["points"][b] else (b, a)
    yield Item(FACT_CHECKING, "MatchBased", table, f"Which club finished the season with {col['points'][a]} points?",
               col["club"][a])
    yield Item(FACT_CHECKING, "Multi-hop FactChecking", table,
               "Which city is the club with the most wins from, and how many points did that club get?",
               f"{col['city'][top_wins]}, {col['points'][top_wins]}")
    yield Item(NUMERICAL_REASONING, "Aggregation", table, "What is the total number of draws of all clubs in the "
               "table?", number(sum(col["draws"])))
    yield Item(NUMERICAL_REASONING, "ArithmeticCalculation", table,
               f"How many more points did {col['club'][hi]} get than {col['club'][lo]}?",
               number(col["points"][hi] - col["points"][lo]))
    more_losses = a if col["losses"][a] > col["losses"][b] else b
    yield Item(NUMERICAL_REASONING, "Comparison", table,
               f"Which club lost more matches, {col['club'][a]} or {col['club'][b]}?", col["club"][more_losses])
    yield Item(NUMERICAL_REASONING, "Counting", table, f"How many clubs got more than {threshold} points?",
               number(sum(p > threshold for p in col["points"])))
    yield Item(NUMERICAL_REASONING, "Domain-Specific", table,
               f"In football, a club's win rate is its wins divided by the matches it played. What is the win rate "
               f"of {col['club'][b]}, as a percentage?", number(100 * col["wins"][b] / 20) + "%")
    yield Item(NUMERICAL_REASONING, "Multi-hop NumericalReasoing", table,
               f"What is the average number of points of the clubs with more than {win_cut} wins?",
               number(statistics.fmean(strong)))
    yield Item(NUMERICAL_REASONING, "Ranking", table, "Which 3 clubs won the most matches?",
               ", ".join(col["club"][i] for i in by_wins))
    yield Item(VISUALIZATION, "ChartGeneration", table, "Please draw a bar chart showing the points of each club.",
               f"y_references = {[col['points']]!r}", "bar")
    yield Item(VISUALIZATION, "ChartGeneration", table,
               "Please draw a horizontal bar chart showing the wins of each club.",
               f"y_references = {[col['wins']]!r}", "hbar")
    yield Item(VISUALIZATION, "ChartGeneration", table,
               f"Please draw a radar chart of the wins, draws and losses of {col['club'][a]}.",
               f"y_references = {[[col['wins'][a], col['draws'][a], col['losses'][a]]]!r}", "radar")


def _corr(x: Sequence[float], y: Sequence[float]) -> float:
    return statistics.correlation(x, y)


def _relation(r: float) -> str:
    """The correlation's name as the instructions define the bands."""
    if abs(r) < 0.3:
        return "No correlation"
    strength = "Strong" if abs(r) >= 0.7 else "Weak"
    return f"{strength} {'positive' if r > 0 else 'negative'} correlation"


def network(rng: random.Random) -> Iterator[Item]:
    """A transport network by year: time, trends, correlation, causes, statistics, line, area, scatter and
    waterfall charts."""
    n = 10
    start = rng.randint(1995, 2010)
    years = list(range(start, start + n))
    while True:
        stations = [rng.randint(20, 30)]
        for _ in range(n - 1):
            stations.append(stations[-1] + rng.choice((-2, -1, 1, 2, 3)))
        trains = sorted(rng.sample(range(40, 140), n))
        passengers = [round(t * rng.uniform(8, 12)) for t in trains]
        staff = [rng.randint(300, 340) for _ in range(n)]
        revenue = [round(p * rng.uniform(0.09, 0.11), 1) for p in passengers]
        if all(s > 0 for s in stations) and len(set(passengers)) == n \
                and abs(_corr(trains, staff)) < 0.25 and _corr(trains, passengers) > 0.75:
            break
    rows = [[years[i], stations[i], trains[i], passengers[i], revenue[i], staff[i]] for i in range(n)]
    table = {"columns": ["year", "stations", "trains", "passengers (thousands)", "revenue (million)", "staff"],
             "data": rows}
    r_tp = _corr(trains, passengers)
    y1 = rng.randint(0, 4)
    y2 = y1 + rng.randint(2, 4)
    yield Item(NUMERICAL_REASONING, "Time-basedCalculation", table,
               f"What is the average number of trains per year from {years[y1]} to {years[y2]}?",
               number(statistics.fmean(trains[y1:y2 + 1])))
    yield Item(DATA_ANALYSIS, "CorrelationAnalysis", table,
               "What is the correlation between 'trains' and 'passengers (thousands)'? Provide the correlation "
               "coefficient as evidence.", f"{_relation(r_tp)}, {r_tp:.2f}")
    yield Item(DATA_ANALYSIS, "CausalAnalysis", table,
               "Does an increase in the number of trains cause an increase in passengers (thousands)?",
               f"Yes, a {_relation(r_tp).lower()} ({r_tp:.2f}) indicates that more trains go with more passengers.")
    better = "trains" if abs(r_tp) > abs(_corr(staff, passengers)) else "staff"
    yield Item(DATA_ANALYSIS, "ImpactAnalysis", table,
               "Which factor, 'trains' or 'staff', has the greater impact on 'passengers (thousands)'?", better)
    yield Item(DATA_ANALYSIS, "StatisticalAnalysis", table,
               "What are the mean and the standard deviation of the 'revenue (million)' column?",
               f"{statistics.fmean(revenue):.2f}, {statistics.stdev(revenue):.2f}")
    yield Item(DATA_ANALYSIS, "TrendForecasting", table,
               f"Based on the data from {years[0]} to {years[-1]}, what trend does the number of trains show?",
               "Increasing trend")
    yield Item(DATA_ANALYSIS, "DescriptiveAnalysis", table,
               "Can you describe the table, explain its main columns and give some basic insights?",
               f"The table shows a transport network from {years[0]} to {years[-1]}: its stations, trains, "
               f"passengers in thousands, revenue in millions and staff. Trains grew from {trains[0]} to {trains[-1]} "
               f"and passengers with them, from {passengers[0]} to {passengers[-1]} thousand, while staff stayed near "
               f"{round(statistics.fmean(staff))}.")
    yield Item(VISUALIZATION, "ChartGeneration", table,
               "Please draw a line chart of the passengers (thousands) per year.",
               f"y_references = {[passengers]!r}", "line")
    yield Item(VISUALIZATION, "ChartGeneration", table,
               "Please draw an area chart of the revenue (million) per year.", f"y_references = {[revenue]!r}", "area")
    yield Item(VISUALIZATION, "ChartGeneration", table,
               "Please draw a scatter plot of passengers (thousands) against trains.",
               f"y_references = {[passengers]!r}", "scatter")
    changes = [b - a for a, b in itertools.pairwise(stations)]
    yield Item(VISUALIZATION, "ChartGeneration", table,
               "Please draw a waterfall chart of the yearly change in the number of stations.",
               f"y_references = {[changes]!r}", "waterfall")


def _clear_pie(values: list[int]) -> bool:
    """No share is near a rounding tie at two decimals (where drawn wedges could round the other way)."""
    total = sum(values)
    return all(abs((100 * v / total) % 1 - 0.5) > 0.05 for v in values)


def shop(rng: random.Random) -> Iterator[Item]:
    """A shop's products: a pie chart of units sold."""
    n = 6
    while True:
        units = _distinct(rng, n, 20, 400)
        if _clear_pie(units):
            break
    names = rng.sample(PRODUCTS, n)
    rows = [[names[i], rng.choice(CATEGORIES), units[i], round(rng.uniform(5, 90), 2), round(rng.uniform(2.5, 5), 1)]
            for i in range(n)]
    table = {"columns": ["product", "category", "units sold", "price", "rating"], "data": rows}
    yield Item(VISUALIZATION, "ChartGeneration", table, "Please draw a pie chart of the units sold of each product.",
               f"y_references = {[[row[2] for row in rows]]!r}", "pie")


def readings(rng: random.Random) -> Iterator[Item]:
    """Monthly sensor readings with one outlier: anomaly detection."""
    months = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October")
    a = [round(rng.uniform(18, 24), 1) for _ in months]
    b = [round(rng.uniform(40, 60), 1) for _ in months]
    k = rng.randrange(2, len(months))
    a[k] = round(a[k] * 10, 1)
    table = {"columns": ["month", "sensor a", "sensor b"], "data": [[m, x, y] for m, x, y in zip(months, a, b,
                                                                                             strict=True)]}
    yield Item(DATA_ANALYSIS, "AnomalyDetection", table,
               "Can you identify any months whose readings deviate significantly from the others?",
               f"The anomaly is row {k + 1} with {months[k]} having an unusually high value {a[k]} in the sensor a "
               "column, about ten times the other months.")


KINDS = (league, network, shop, readings)
MAX_SIZE = 4_000
"""The most tables of each kind (``core.bounds``): 100,000 questions, over a hundred times the release's 886."""


def items(seed: int, size: int = 1) -> list[Item]:
    """``size`` tables of each kind and their questions, drawn from ``seed``."""
    rng = random.Random(seed if seed >= 0 else f"negative {seed}")  # (Random takes an int's absolute value)
    return [item for _ in range(size) for kind in KINDS for item in kind(rng)]


def _line(fields: dict[str, Any]) -> str:
    return json.dumps(fields, ensure_ascii=False)


def write_set(out: Path, *, seed: int = 0, size: int = 1) -> list[str]:
    """Write the set under ``out/tablebench/`` (each file whole or not at all); returns what it wrote, one line
    per file."""
    folder = out / SOURCE.name
    chosen = items(seed, at_most("--size", size, MAX_SIZE))
    ids = [hashlib.md5(f"structbench-tablebench:{seed}:{i}".encode()).hexdigest() for i in range(len(chosen))]
    base = [
        {"id": qid, "qtype": it.qtype, "qsubtype": it.qsubtype, "table": it.table, "question": it.question,
         "answer": it.answer, **({"chart_type": it.chart_type} if it.chart_type else {})}
        for qid, it in zip(ids, chosen, strict=True)
    ]
    texts = {QUESTIONS_FILE: base}
    for itype in INSTRUCTION_TYPES:
        texts[INSTRUCTION_FILES[itype]] = [
            {"id": q["id"], "qtype": q["qtype"], "qsubtype": q["qsubtype"],
             "instruction": instruction(itype, it.qtype, it.qsubtype, it.table, it.question),
             "instruction_type": itype, **{k: v for k, v in q.items() if k not in ("id", "qtype", "qsubtype")}}
            for q, it in zip(base, chosen, strict=True)
        ]
    write_texts_atomic([(folder / name, "".join(_line(line) + "\n" for line in lines))  # all five or none
                        for name, lines in texts.items()])
    return [f"wrote {len(lines)} questions to {folder / name}" for name, lines in texts.items()]
