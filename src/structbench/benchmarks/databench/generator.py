"""Test sets in DataBench's layout (``structbench generate databench --out DIR``): invented tables, real answers.

Each dataset is a table of invented rows (names put together from syllables, categories, whole and decimal numbers
with a few missing, yes/no flags, dates in UTC) written as the release writes its own: ``all.parquet`` (the whole
table), ``sample.parquet`` (20 of its rows, in table order) and ``qa.parquet`` (20 questions, 4 of each answer type,
with ``answer`` computed over the whole table and ``sample_answer`` over the sample, by pandas). A question is kept
only where both answers are well defined (no tie for a "most" or "highest", no empty selection), and each question
of a dataset is asked once. The same seed writes the same set; ``--data-dir DIR`` reads it as it reads the release.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from structbench.benchmarks.databench.answers import SEMANTICS
from structbench.benchmarks.databench.source import ALL_FILE, DATA, NAME, QA_FILE, SAMPLE_FILE
from structbench.core.atomic import move_into_place, staging_dir
from structbench.core.bounds import at_most
from structbench.core.errors import StorageError, UsageError

MAX_DATASETS = 10_000
"""The most datasets a set may hold (``core.bounds``): about 150 times the release's 65."""
MAX_ROWS = 100_000
"""The most rows of a whole table: 800 times the default, a hundred times most of the release's tables."""
SAMPLE_ROWS = 20
"""DataBench Lite's sample size."""
PER_TYPE = 4
"""Questions per answer type and dataset (five types: the release's 20 per dataset)."""
SYLLABLES = ("ka", "lo", "mi", "ren", "sa", "tor", "vel", "quin", "bar", "dun", "el", "fy", "gor", "hal", "is")


@dataclass(frozen=True)
class Theme:
    """What a dataset's rows are: their noun and the columns, each by its role in the questions."""

    name: str
    entity: str
    entities: str
    label: str
    """The name column (distinct values)."""
    group: str
    groups: tuple[str, ...]
    kind: str
    kinds: tuple[str, ...]
    count: str
    """A whole-number column."""
    measure: str
    """A decimal column, a few values missing."""
    flag: str
    flag_phrase: str
    """How a question says the flag holds (``is organic``)."""
    date: str


THEMES = (
    Theme("Orchards", "orchard", "orchards", "name", "region", ("North", "South", "East", "West", "Coast"),
          "main fruit", ("apple", "pear", "plum", "cherry"), "trees", "yield (tonnes)", "organic", "is organic",
          "planted"),
    Theme("Lighthouses", "lighthouse", "lighthouses", "name", "coast", ("Atlantic", "Baltic", "Arctic", "Channel"),
          "lamp", ("oil", "gas", "electric", "solar", "acetylene"), "steps", "height_m", "automated",
          "is automated", "first lit"),
    Theme("Ferries", "ferry", "ferries", "vessel", "operator", ("Bluewave", "Northline", "Isles Co", "Tidewater"),
          "route type", ("island", "river", "coastal"), "capacity", "crossing minutes", "night_service",
          "runs at night", "launched"),
    Theme("Bakeries", "bakery", "bakeries", "bakery", "district", ("Old Town", "Harbour", "Market", "Hill", "Park"),
          "speciality", ("bread", "pastry", "cake", "pie"), "staff", "rating", "open_sunday", "opens on Sundays",
          "opened"),
)

def _room(n: int, made: Callable[[int], int], low: int) -> int:
    """The least size from ``low`` up whose ``made(size)`` distinct values are four times ``n``: distinct draws among
    them end soon (a table of more rows than the draws could tell apart looped for ever)."""
    size = low
    while made(size) < 4 * n:
        size += 1
    return size


def _names(rng: random.Random, n: int) -> list[str]:
    longest = _room(n, lambda k: sum(len(SYLLABLES) ** j for j in range(2, k + 1)), 3)
    seen: set[str] = set()
    names: list[str] = []
    while len(names) < n:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, longest))).capitalize()
        if word not in seen:
            seen.add(word)
            names.append(word)
    return names


def make_table(theme: Theme, rows: int, rng: random.Random) -> Any:
    """An invented table of ``rows`` rows (a pandas DataFrame with the release's kinds of columns)."""
    import pandas as pd

    highest = _room(rows, lambda top: (top - 1) * 100 + 1, 500)  # (values of two decimals from 1 to ``highest``)
    measures: set[float] = set()
    values: list[float] = []
    while len(values) < rows:
        value = round(rng.uniform(1, highest), 2)
        if value not in measures:
            measures.add(value)
            values.append(value)
    start = pd.Timestamp("1950-01-01", tz="UTC")
    table = pd.DataFrame({
        theme.label: _names(rng, rows),
        theme.group: pd.Categorical([rng.choice(theme.groups) for _ in range(rows)], categories=list(theme.groups)),
        theme.kind: pd.Categorical([rng.choice(theme.kinds) for _ in range(rows)], categories=list(theme.kinds)),
        theme.count: pd.array([rng.randint(1, 400) for _ in range(rows)], dtype="int64"),
        theme.measure: [None if rng.random() < 0.05 else v for v in values],
        theme.flag: [rng.random() < 0.4 for _ in range(rows)],
        theme.date: [start + pd.Timedelta(days=rng.randint(0, 25_000)) for _ in range(rows)],
    })
    table[theme.measure] = table[theme.measure].astype("float64")
    return table


# -- questions ------------------------------------------------------------------------------------------------------
# A template draws its parameters, then answers over one table: the value, or None where the answer is not well
# defined there (a tie, an empty selection, nothing to average).


@dataclass(frozen=True)
class Asked:
    """One drawn question: its text, the columns it reads, and how to answer it over a table."""

    question: str
    columns: tuple[str, ...]
    answer: Callable[[Any], Any]


Template = Callable[[Theme, Any, random.Random], Asked]


def _top(series: Any, k: int, largest: bool = True) -> Any:
    """The index of the ``k`` largest (smallest) values; None when the k-th ties with the next."""
    ordered = series.dropna().sort_values(ascending=not largest)
    if len(ordered) < k or (len(ordered) > k and ordered.iloc[k - 1] == ordered.iloc[k]):
        return None
    return ordered.index[:k]


def _most_common(series: Any, k: int) -> list[str] | None:
    counts = series.value_counts()
    counts = counts[counts > 0]
    if len(counts) < k or (len(counts) > k and counts.iloc[k - 1] == counts.iloc[k]):
        return None
    return [str(v) for v in counts.index[:k]]


def _py(value: Any) -> Any:
    """A pandas or NumPy value as Python's own (``numpy.int64(3)`` -> ``3``)."""
    return value.item() if hasattr(value, "item") else value


def b_any_above(t: Theme, df: Any, rng: random.Random) -> Asked:
    x = round(float(df[t.measure].quantile(rng.choice((0.8, 0.9, 0.97)))), 1)
    return Asked(f"Is there any {t.entity} with a {t.measure} greater than {x}?", (t.measure,),
                 lambda d: bool((d[t.measure] > x).any()))


def b_all_above(t: Theme, df: Any, rng: random.Random) -> Asked:
    k = rng.choice((1, 5, 10, 20))
    return Asked(f"Do all {t.entities} have more than {k} {t.count}?", (t.count,),
                 lambda d: bool((d[t.count] > k).all()))


def b_flag_of_top(t: Theme, df: Any, rng: random.Random) -> Asked:
    def answer(d: Any) -> Any:
        top = _top(d[t.measure], 1)
        return None if top is None else bool(d.loc[top[0], t.flag])

    return Asked(f"Is it true that the {t.entity} with the highest {t.measure} {t.flag_phrase}?",
                 (t.measure, t.flag), answer)


def b_more_often(t: Theme, df: Any, rng: random.Random) -> Asked:
    a, b = rng.sample(list(t.groups), 2)
    return Asked(f"Are there more {t.entities} in the {t.group} {a} than in {b}?", (t.group,),
                 lambda d: bool((d[t.group] == a).sum() > (d[t.group] == b).sum()))


def b_mean_above(t: Theme, df: Any, rng: random.Random) -> Asked:
    x = rng.choice((50, 100, 150, 200, 250))
    return Asked(f"Is the average {t.count} above {x}?", (t.count,), lambda d: bool(d[t.count].mean() > x))


def c_group_of_top(t: Theme, df: Any, rng: random.Random) -> Asked:
    largest = rng.random() < 0.5

    def answer(d: Any) -> Any:
        top = _top(d[t.measure], 1, largest)
        return None if top is None else str(d.loc[top[0], t.group])

    word = "highest" if largest else "lowest"
    return Asked(f"In which {t.group} is the {t.entity} with the {word} {t.measure}?", (t.measure, t.group), answer)


def c_label_of_top(t: Theme, df: Any, rng: random.Random) -> Asked:
    def answer(d: Any) -> Any:
        top = _top(d[t.count], 1)
        return None if top is None else str(d.loc[top[0], t.label])

    return Asked(f"What is the {t.label} of the {t.entity} with the most {t.count}?", (t.count, t.label), answer)


def c_most_common(t: Theme, df: Any, rng: random.Random) -> Asked:
    column = rng.choice((t.group, t.kind))

    def answer(d: Any) -> Any:
        top = _most_common(d[column], 1)
        return None if top is None else top[0]

    return Asked(f"Which {column} is the most common among the {t.entities}?", (column,), answer)


def c_first_date(t: Theme, df: Any, rng: random.Random) -> Asked:
    earliest = rng.random() < 0.5

    def answer(d: Any) -> Any:
        day = d[t.date].min() if earliest else d[t.date].max()
        return str(day.date())

    word = "earliest" if earliest else "latest"
    return Asked(f"What is the {word} {t.date} date (YYYY-MM-DD)?", (t.date,), answer)


def lc_groups_of_top(t: Theme, df: Any, rng: random.Random) -> Asked:
    k = rng.choice((2, 3, 4))

    def answer(d: Any) -> Any:
        top = _top(d[t.measure], k)
        return None if top is None else [str(v) for v in d.loc[top, t.kind]]

    return Asked(f"List the {t.kind} of the {k} {t.entities} with the highest {t.measure}.", (t.measure, t.kind),
                 answer)


def lc_labels_of_bottom(t: Theme, df: Any, rng: random.Random) -> Asked:
    k = rng.choice((2, 3))

    def answer(d: Any) -> Any:
        top = _top(d[t.measure], k, largest=False)
        return None if top is None else [str(v) for v in d.loc[top, t.label]]

    return Asked(f"What are the {t.label} values of the {k} {t.entities} with the lowest {t.measure}?",
                 (t.measure, t.label), answer)


def lc_most_common(t: Theme, df: Any, rng: random.Random) -> Asked:
    k = rng.choice((2, 3))
    column = rng.choice((t.group, t.kind))
    return Asked(f"What are the {k} most common values of {column}?", (column,), lambda d: _most_common(d[column], k))


def lc_distinct_flagged(t: Theme, df: Any, rng: random.Random) -> Asked:
    def answer(d: Any) -> Any:
        chosen = d.loc[d[t.flag], t.kind]
        values = sorted({str(v) for v in chosen})
        return values or None

    return Asked(f"Which {t.kind} values occur among the {t.entities} where {t.flag} is true?", (t.flag, t.kind),
                 answer)


def ln_top_measures(t: Theme, df: Any, rng: random.Random) -> Asked:
    k = rng.choice((2, 3, 5))

    def answer(d: Any) -> Any:
        top = _top(d[t.measure], k)
        return None if top is None else [_py(v) for v in d.loc[top, t.measure]]

    return Asked(f"What are the {k} highest values of {t.measure}?", (t.measure,), answer)


def ln_counts_of_bottom(t: Theme, df: Any, rng: random.Random) -> Asked:
    k = rng.choice((2, 3))

    def answer(d: Any) -> Any:
        top = _top(d[t.measure], k, largest=False)
        return None if top is None else [_py(v) for v in d.loc[top, t.count]]

    return Asked(f"List the {t.count} of the {k} {t.entities} with the lowest {t.measure}.", (t.measure, t.count),
                 answer)


def ln_lowest_counts(t: Theme, df: Any, rng: random.Random) -> Asked:
    k = rng.choice((2, 4))

    def answer(d: Any) -> Any:
        return [_py(v) for v in d[t.count].nsmallest(k)]

    return Asked(f"What are the {k} lowest {t.count} values?", (t.count,), answer)


def n_rows(t: Theme, df: Any, rng: random.Random) -> Asked:
    return Asked(f"How many {t.entities} are there?", (t.label,), lambda d: len(d))


def n_in_group(t: Theme, df: Any, rng: random.Random) -> Asked:
    value = rng.choice(t.groups)
    return Asked(f"How many {t.entities} are in the {t.group} {value}?", (t.group,),
                 lambda d: int((d[t.group] == value).sum()))


def n_max_count(t: Theme, df: Any, rng: random.Random) -> Asked:
    largest = rng.random() < 0.5
    word = "maximum" if largest else "minimum"
    return Asked(f"What is the {word} number of {t.count}?", (t.count,),
                 lambda d: _py(d[t.count].max() if largest else d[t.count].min()))


def n_mean_measure(t: Theme, df: Any, rng: random.Random) -> Asked:
    def answer(d: Any) -> Any:
        mean = d[t.measure].mean()
        return None if mean != mean else float(mean)

    return Asked(f"What is the average {t.measure}?", (t.measure,), answer)


def n_flagged_total(t: Theme, df: Any, rng: random.Random) -> Asked:
    def answer(d: Any) -> Any:
        chosen = d.loc[d[t.flag], t.count]
        return int(chosen.sum()) if len(chosen) else None

    return Asked(f"What is the total {t.count} of the {t.entities} where {t.flag} is true?", (t.flag, t.count),
                 answer)


TEMPLATES: dict[str, tuple[Template, ...]] = {
    "boolean": (b_any_above, b_all_above, b_flag_of_top, b_more_often, b_mean_above),
    "category": (c_group_of_top, c_label_of_top, c_most_common, c_first_date),
    "number": (n_rows, n_in_group, n_max_count, n_mean_measure, n_flagged_total),
    "list[category]": (lc_groups_of_top, lc_labels_of_bottom, lc_most_common, lc_distinct_flagged),
    "list[number]": (ln_top_measures, ln_counts_of_bottom, ln_lowest_counts),
}
"""Answer type -> its question templates."""
assert set(TEMPLATES) == set(SEMANTICS)

COLUMN_TYPES = {"int64": "number[int64]", "float64": "number[double]", "bool": "boolean", "category": "category"}


def _column_type(df: Any, column: str) -> str:
    dtype = str(df[column].dtype)
    if dtype.startswith("datetime64"):
        return "date[ns, UTC]"
    return COLUMN_TYPES.get(dtype, "text")


def _answer_text(value: Any) -> str:
    """An answer as the release's files write it: ``True``, ``3``, ``12.5``, ``['a', 'b']``, ``[1, 2.5]``."""
    return str(value)


def questions(theme: Theme, whole: Any, sample: Any, dataset: str, rng: random.Random) -> list[dict[str, Any]]:
    """``PER_TYPE`` questions of each answer type, each answered over the whole table and over the sample."""
    rows: list[dict[str, Any]] = []
    for semantic in SEMANTICS:
        templates = TEMPLATES[semantic]
        asked: set[str] = set()
        tries = 0
        while sum(r["type"] == semantic for r in rows) < PER_TYPE:
            tries += 1
            if tries > 500:
                raise UsageError(f"databench generator: cannot draw {PER_TYPE} {semantic} questions for {dataset} "
                                 "(a larger --rows gives more)")
            drawn = templates[(tries - 1) % len(templates)](theme, whole, rng)
            if drawn.question in asked:
                continue
            answer, sample_answer = drawn.answer(whole), drawn.answer(sample)
            if answer is None or sample_answer is None:
                continue
            asked.add(drawn.question)
            rows.append({
                "question": drawn.question,
                "answer": _answer_text(answer),
                "type": semantic,
                "columns_used": str(list(drawn.columns)),
                "column_types": str([_column_type(whole, c) for c in drawn.columns]),
                "sample_answer": _answer_text(sample_answer),
                "dataset": dataset,
            })
    return rows


def datasets(count: int, rows: int, seed: int) -> Iterator[tuple[str, Any, Any, list[dict[str, Any]]]]:
    """(folder, whole table, sample, questions) of each dataset, seeded."""
    if rows < SAMPLE_ROWS:
        raise UsageError(f"--rows {rows}: a table needs at least {SAMPLE_ROWS} rows (DataBench Lite's sample)")
    for i in range(count):
        theme = THEMES[i % len(THEMES)]
        rng = random.Random(f"{seed}/{i}")
        whole = make_table(theme, rows, rng)
        picked = sorted(rng.sample(range(rows), SAMPLE_ROWS))
        sample = whole.iloc[picked].reset_index(drop=True)
        folder = f"{i + 1:03d}_{theme.name}"
        yield folder, whole, sample, questions(theme, whole, sample, folder, rng)


def write_set(out: Path, *, count: int = 3, rows: int = 120, seed: int = 0) -> list[str]:
    """Write ``count`` datasets under ``out/databench/data/`` (whole or not at all); the lines saying what it holds."""
    import pandas as pd

    at_most("--datasets", count, MAX_DATASETS)  # before anything is made
    at_most("--rows", rows, MAX_ROWS)
    target = out / NAME
    if target.exists():
        raise UsageError(f"{target} already exists: choose another --out, or remove it")
    lines = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        staging = staging_dir(target)  # (a killed generate's draft here is removed first)
        try:
            total = 0
            for folder, whole, sample, qa in datasets(count, rows, seed):
                where = staging / DATA / folder
                where.mkdir(parents=True)
                whole.to_parquet(where / ALL_FILE, index=False)
                sample.to_parquet(where / SAMPLE_FILE, index=False)
                pd.DataFrame(qa).to_parquet(where / QA_FILE, index=False)
                total += len(qa)
                lines.append(f"{folder}: {len(whole)} rows x {whole.shape[1]} columns, {len(qa)} questions")
            move_into_place(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    except OSError as err:
        raise StorageError(f"{target}: cannot write: {err.strerror or err}") from None
    plural = "s" if count != 1 else ""
    return [*lines, f"wrote {total} questions in {count} dataset{plural} to {target} (read it with --data-dir {out})"]
