"""QATCH-style generation from user tables, gold by execution."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from structbench.benchmarks.rfqa.generator import CATEGORIES, generate_pairs, read_pairs
from structbench.core.errors import DataError
from structbench.testing.cli import invoke


@pytest.fixture
def tables(small_tables: Path) -> Path:
    return small_tables


def test_every_category_with_gold_by_execution(tables: Path) -> None:
    pairs = generate_pairs(tables, per_category=2, seed=1)
    assert {p.category for p in pairs} == set(CATEGORIES)
    assert len({p.sql for p in pairs}) == len(pairs)
    rows = list(csv.DictReader((tables / "country.csv").open()))
    for p in pairs:
        assert p.rows and all(len(r) == len(p.columns) for r in p.rows)
        if p.category == "select_numerical" and p.tables == ("country",):
            column, op, value = p.sql.split(" WHERE ")[1].split(" ", 2)
            if column == "population":
                keep = [
                    r
                    for r in rows
                    if r["population"] and eval(f"{int(r['population'])} {'==' if op == '=' else op} {value}")
                ]
                assert len(p.rows) == len(keep), p.sql
    join = next(p for p in pairs if p.category == "join")
    assert "country_id" in join.sql and len(join.tables) == 2
    assert generate_pairs(tables, per_category=2, seed=1) == pairs  # deterministic


def test_single_csv_and_cli(tables: Path, tmp_path: Path) -> None:
    out = tmp_path / "pairs.jsonl"
    done = invoke("generate", "rfqa", str(tables / "country.csv"), "--out", str(out), "--per-category", "1")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines and done.stdout.splitlines() == [f"wrote {len(lines)} pairs to {out}"]
    assert set(lines[0]) == {"id", "category", "question", "sql", "tables", "schema", "types", "gold", "data"}
    assert all(line["tables"] == ["country"] for line in lines)
    assert all(line["data"] == str((tables / "country.csv").resolve()) for line in lines)
    assert read_pairs(out) == generate_pairs(tables / "country.csv", per_category=1)


def test_bad_input(tmp_path: Path) -> None:
    with pytest.raises(DataError):
        generate_pairs(tmp_path)
    with pytest.raises(DataError):
        generate_pairs(tmp_path, categories=["pivot"])


def test_a_ragged_or_empty_csv_is_one_line_naming_it(tmp_path: Path) -> None:
    """A row with another number of fields was DuckDB's sniffer text (hints at options no user can set, the internal
    query); a table with no rows gave an empty file that ``-b rfqa:generated`` then refused."""
    (tmp_path / "ragged.csv").write_text("a,b\n1,2\n3,4\n5,6,7\n8,9\n")
    ragged = invoke("generate", "rfqa", str(tmp_path / "ragged.csv"), "--out", str(tmp_path / "x.jsonl"))
    assert ragged.returncode == 2
    assert ragged.stderr == f"error: {tmp_path / 'ragged.csv'}:4: 3 fields, the header has 2\n"
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "h.csv").write_text("a,b,c\n")
    empty = invoke("generate", "rfqa", str(tmp_path / "empty"), "--out", str(tmp_path / "h.jsonl"))
    assert empty.returncode == 2 and "no question could be asked of its tables" in empty.stderr
    assert not (tmp_path / "x.jsonl").exists() and not (tmp_path / "h.jsonl").exists()


def test_limit_never_cuts_a_tie_and_nulls_go_last(tmp_path: Path) -> None:
    (tmp_path / "score.csv").write_text("name,points\na,5\nb,5\nc,5\nd,3\ne,\nf,1\ng,1\n")
    pairs = generate_pairs(tmp_path / "score.csv", per_category=10, categories=["limit", "order_by"], seed=0)
    limits = [p for p in pairs if p.category == "limit"]
    assert limits and all("DESC NULLS LAST" in p.sql for p in pairs)
    for p in limits:
        k = int(p.sql.rsplit("LIMIT ", 1)[1])
        # ordered 5,5,5,3,1,1,NULL: k = 1, 2 (inside 5,5,5) and 5 (inside 1,1) are ambiguous
        assert k in (3, 4, 6, 7, 8, 9, 10), p.sql
    ordered = next(p for p in pairs if p.category == "order_by" and "points" in p.columns)
    assert ordered.rows[-1][ordered.columns.index("points")] is None


def test_pairs_are_written_whole_into_a_new_folder_and_a_negative_seed_draws_its_own(tables: Path,
                                                                                       tmp_path: Path) -> None:
    """The file was opened and written in place (a failed write left a cut-off file that ``run`` refused), a missing
    folder was a FileNotFoundError traceback, and seed -1 drew seed 1's pairs."""
    out = tmp_path / "new" / "folder" / "pairs.jsonl"
    done = invoke("generate", "rfqa", str(tables / "country.csv"), "--out", str(out), "--per-category", "1")
    assert done.returncode == 0, done.stderr
    assert read_pairs(out) == generate_pairs(tables / "country.csv", per_category=1)
    assert generate_pairs(tables, per_category=2, seed=-1) != generate_pairs(tables, per_category=2, seed=1)
    (tmp_path / "f").write_text("")
    refused = invoke("generate", "rfqa", str(tables / "country.csv"), "--out", str(tmp_path / "f" / "x.jsonl"))
    assert refused.returncode == 2 and "f is a file, not a folder" in refused.stderr, refused.stderr


def test_per_category_past_twenty_is_made_and_a_shortfall_is_one_note(shared_datasets: Path, tmp_path: Path) -> None:
    """Every category had 20 draws whatever ``--per-category`` asked, so 100 silently wrote at most 20; a table with
    fewer distinct questions than asked now gives what it has, one stderr note per table and category, exit 0."""
    country = shared_datasets / "relationalfactqa" / "dataset" / "data" / "galois" / "world_1" / "country.csv"
    out = tmp_path / "pairs.jsonl"
    done = invoke("generate", "rfqa", str(country), "--out", str(out), "--per-category", "30")
    assert done.returncode == 0, done.stderr
    counts = Counter(json.loads(line)["category"] for line in out.read_text().splitlines())
    for category in ("project", "select_categorical", "select_numerical", "select_mixed", "order_by", "limit"):
        assert counts[category] == 30, (category, counts)
    notes = done.stderr.splitlines()
    assert all(n.startswith("note: table country, category ") for n in notes), notes
    assert sorted(n.split(",")[1].split()[1].rstrip(":") for n in notes) == sorted(
        c for c in CATEGORIES if counts[c] < 30
    )
    # 15 columns: 15 DISTINCT questions; one table: no join
    assert counts["distinct"] == 15 and "category distinct: 15 of 30 pairs: " in done.stderr
    assert "distinct questions; the table allows no more" in done.stderr
    assert "category join: 0 of 30 pairs: the table has no key-like column" in done.stderr
    assert done.stdout == f"wrote {sum(counts.values())} pairs to {out}\n"


def test_a_tied_or_empty_column_drawn_does_not_end_its_category(tmp_path: Path) -> None:
    """A LIMIT key whose every cut is tied (``flag``), or a condition column with no value (``gone``), drew None,
    which ended the category: whether it got its pairs hung on the seed."""
    rows = "".join(f"n{i},1,{i},,c{i % 4}\n" for i in range(30))
    (tmp_path / "t.csv").write_text("name,flag,points,gone,kind\n" + rows)
    for seed in range(8):
        notes: list[str] = []
        pairs = generate_pairs(tmp_path / "t.csv", per_category=3, categories=["limit", "select_numerical"],
                               seed=seed, note=notes.append)
        assert Counter(p.category for p in pairs) == {"limit": 3, "select_numerical": 3}, (seed, notes)
        assert all("flag" not in p.sql.split("ORDER BY")[-1] for p in pairs if p.category == "limit")
        assert notes == []
