"""The shared CSV-database layer: one set of typing and NULL rules for files and in-memory tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench.core.errors import DataError
from structbench.data.csvdb import Database, load_folder, load_rows, load_table

CSV = "ID,Name ,Zip,Score,Ratio,Flag,Empty\n1,Ann,007,7,1.5,true,\n2, Bob ,12,nan,-.5,FALSE,\n3,NULL,null,12,2e3,,\n"


def test_inferred_types_nulls_and_text(tmp_path: Path) -> None:
    (tmp_path / "People.csv").write_text(CSV)
    db = load_folder(tmp_path, keep_text=True)
    assert db.tables["people"] == {
        "id": "BIGINT",
        "name": "VARCHAR",
        "zip": "VARCHAR",  # a leading zero keeps codes as text
        "score": "BIGINT",
        "ratio": "DOUBLE",
        "flag": "BOOLEAN",
        "empty": "VARCHAR",
    }
    assert db.headers["people"] == ["ID", "Name", "Zip", "Score", "Ratio", "Flag", "Empty"]
    assert db.rows("people") == [
        (1, "Ann", "007", 7, 1.5, True, None),
        (2, " Bob ", "12", None, -0.5, False, None),
        (3, None, None, 12, 2000.0, None, None),
    ]
    assert db.text["people"][1] == ["2", " Bob ", "12", None, "-.5", "FALSE", None]
    assert db.execute("SELECT name FROM target.people WHERE score > ? ORDER BY score DESC", (5,))[2] == [
        (None,),
        ("Ann",),
    ]  # NULLs sort first descending, as in PostgreSQL


def test_declared_types_win_and_uncastable_values_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a,b\n001,x\n2,3\n")
    db = Database(key="d")
    load_table(db, "t", path, {"a": "STRING", "b": "INTEGER"})
    assert db.tables["t"] == {"a": "VARCHAR", "b": "BIGINT"}
    assert db.rows("t") == [("001", None), ("2", 3)]
    assert db.issues == ["t.b: 1 value(s) not castable to BIGINT loaded as NULL"]


def test_rows_in_memory_follow_the_same_rules(tmp_path: Path) -> None:
    (tmp_path / "people.csv").write_text(CSV)
    from_file = load_folder(tmp_path, keep_text=True)
    header = CSV.splitlines()[0].split(",")
    rows = [line.split(",") for line in CSV.splitlines()[1:]]
    db = Database(key="mem")
    load_rows(db, "people", header, [[c or None for c in r] for r in rows], keep_text=True)
    assert db.tables == from_file.tables
    assert db.rows("people") == from_file.rows("people")
    assert db.text == from_file.text


def test_bad_tables_are_data_errors(tmp_path: Path) -> None:
    (tmp_path / "dup.csv").write_text("a,A\n1,2\n")
    with pytest.raises(DataError, match="duplicate"):
        load_folder(tmp_path)
    (tmp_path / "dup.csv").unlink()
    (tmp_path / "ragged.csv").write_text("a,b\n1,2\n3\n")
    with pytest.raises(DataError, match="ragged.csv"):
        load_folder(tmp_path)
    with pytest.raises(DataError, match="row 1 has 1 cells"):
        load_rows(Database(key="m"), "t", ["a", "b"], [["1"]])
    with pytest.raises(DataError, match="no CSV files"):
        load_folder(tmp_path / "nowhere")
