"""Stored published numbers against the papers' own text (``../shared/papers/*.txt``): every cell of the
StructFact tables and of RelationalFactQA's Tables 2 and 8, read back from the table as the paper prints it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from published_checks import check_shape, values
from structbench.benchmarks.rfqa.paper import TABLE2, TABLE8
from structbench.benchmarks.structfact.paper import TABLES as STRUCTFACT
from structbench.papers import PaperTable

PAPERS = Path(__file__).resolve().parents[2].parent / "shared" / "papers"
NUMBER = re.compile(r"\(?([+-]?\d+(?:\.\d+)?)\)?")


def paper(name: str) -> list[str]:
    path = PAPERS / name
    if not path.is_file():
        if os.environ.get("STRUCTBENCH_REQUIRE_SHARED") == "1":
            pytest.fail(f"{path} is required (STRUCTBENCH_REQUIRE_SHARED=1) but missing")
        pytest.skip(f"{path} not found")
    return path.read_text(encoding="utf-8").splitlines()


def _caption(lines: list[str], number: str) -> int:
    return next(i for i, line in enumerate(lines) if line.startswith(f"{number}:"))


def _cells(line: str) -> list[str]:
    return [re.sub(r"</?u>", "", c).strip() for c in line.split("\t")]


def table_lines(lines: list[str], number: str) -> list[list[str]]:
    """The tab-separated lines of a table printed above its caption (back to the previous caption)."""
    end = _caption(lines, number)
    start = end
    while start > 0 and not lines[start - 1].startswith(("Table ", "Figure ")):
        start -= 1
    return [_cells(line) for line in lines[start:end] if "\t" in line]


def numbers(cells: list[str]) -> list[float]:
    return [float(m.group(1)) for c in cells if (m := NUMBER.fullmatch(c))]


def stored(table: PaperTable) -> list[list[float]]:
    return [[v for v in row.values if v is not None] for row in table.published.rows]


@pytest.mark.parametrize("table", [t for t in STRUCTFACT if t.published.table != "Table 23"],
                         ids=lambda t: t.published.table)
def test_structfact_tables_as_printed(table: PaperTable) -> None:
    """Each row's numbers, in order, are the numbers of the paper's line for that model (and method)."""
    lines = table_lines(paper("structfact.txt"), table.published.table)
    data = table.published
    printed = [(c[0], c[1], numbers(c[2:])) if data.table == "Table 9" else (c[0], "", numbers(c[1:]))
               for c in lines if numbers(c)]
    assert len(printed) == len(data.rows)
    model = ""
    for row, (name, method, got) in zip(data.rows, printed, strict=True):
        model = name or model  # Table 9 names the model on its first method's line only
        assert (row.name if not method else row.label) == (name if not method else f"{model}, {method}")
        assert [v for v in row.values if v is not None] == got, row.name
    assert len(data.numbers()) == sum(len(n) for _, _, n in printed)


def test_structfact_table23_as_printed() -> None:
    """One line per setting and metric, each task's score and decrease: the stored row of the setting holds them."""
    lines = paper("structfact.txt")
    start = _caption(lines, "Table 23")
    printed = [_cells(line) for line in lines[start + 1 : start + 40] if "\t" in line][2:]
    data = next(t for t in STRUCTFACT if t.published.table == "Table 23").published
    assert len(printed) == 20
    setting = ""
    for cells in printed:
        setting = cells[0] or setting
        metric = {"Acc": "acc", "F1": "f1", "Prec.": "prec", "Recall": "recall"}[cells[1]]
        row = values(data, f"GPT-4o-mini, {setting}")
        got = []
        for task in ("arith", "geo", "multihop", "comp", "struct"):
            got += [row[f"{task}_{metric}"], row[f"{task}_{metric}_decr"]]
        assert got == [None if c == "-" else float(c.strip("()")) for c in cells[2:12]], (setting, metric)
    assert len(data.numbers()) == 20 * 10 - 4 * 5  # the w/ data row prints no decrease


def test_structfact_new_tables_sum_as_the_paper_says() -> None:
    by_number = {t.published.table: t for t in STRUCTFACT}
    for number in ("Table 10", "Table 11"):  # Overall is the mean of the four prompts
        data = by_number[number].published
        for row in data.rows:
            v = values(data, row.name)
            for m in [c.key.removeprefix("overall_") for c in data.columns if c.key.startswith("overall_")]:
                mean = sum(v[f"{p}_{m}"] or 0.0 for p in ("zs_direct", "zs_cot", "fs_direct", "fs_cot")) / 4
                assert v[f"overall_{m}"] == pytest.approx(mean, abs=0.015), (number, row.name, m)
    for n in range(12, 23):  # the Overall row is the mean of the ten models
        data = by_number[f"Table {n}"].published
        models = [r for r in data.rows if r.kind == "model"]
        assert len(models) == 10 and data.rows[-1].kind == "aggregate"
        for j in range(len(data.columns)):
            mean = sum(r.values[j] or 0.0 for r in models) / len(models)
            assert data.rows[-1].values[j] == pytest.approx(mean, abs=0.006), (n, data.columns[j].key)
    for n in (14, 17, 20):  # recall (weighted) is accuracy: Tables 15, 18 and 21 repeat 14, 17 and 20's Acc.
        acc, prf = by_number[f"Table {n}"].published, by_number[f"Table {n + 1}"].published
        for row in acc.rows:
            for task in ("arith", "geo", "multihop", "comp", "struct"):
                assert values(prf, row.name)[f"{task}_recall"] == values(acc, row.name)[f"{task}_acc"]


def _rfqa_printed(table: str) -> dict[tuple[str, str], list[float]]:
    """(method, metric) -> the nine models' values, from the lines of a transposed RFQA table."""
    lines = paper("relationalfactqa.txt")
    start = next(i for i, line in enumerate(lines) if re.match(rf"^\d*{table}:", line))
    out: dict[tuple[str, str], list[float]] = {}
    method = ""
    for line in lines[start : start + 40]:
        m = re.match(r"^(NL|SQL|CoT)?(P|R|F1|TS|A VG) ((?:\d*\.?\d+ ?){9})$", line)
        if m:
            method = m.group(1) or method
            out[(method, m.group(2).replace(" ", ""))] = [float(x) for x in m.group(3).split()]
    return out


def test_rfqa_table8_as_printed_and_its_one_difference_from_table2() -> None:
    printed = _rfqa_printed("Table 8")
    assert len(printed) == 15
    data = check_shape(TABLE8, [r.model for r in TABLE2.published.rows],
                       [f"{m} {x}" for m in ("NL", "SQL", "CoT") for x in ("P", "R", "F1", "TS", "AVG")])
    for j, row in enumerate(data.rows):
        for column in data.columns:
            method, metric = column.label.split()
            assert values(data, row.model)[column.key] == printed[(method, metric)][j], (row.model, column.key)
    table2 = TABLE2.published
    for row in data.rows:
        for m in ("nl", "sql", "cot"):
            for x in ("f1", "ts", "avg"):
                here, there = values(data, row.model)[f"{m}_{x}"], values(table2, row.model)[f"{m}_{x}"]
                if (row.model, m, x) == ("GPT 4.1", "sql", "avg"):
                    assert (here, there) == (0.242, 0.302)  # said in both files' notes
                    assert here == pytest.approx((0.388 + 0.096) / 2, abs=0.0005)
                    continue
                assert here == there, (row.model, m, x)
    assert any("0.242" in n and "0.302" in n for n in data.notes)
