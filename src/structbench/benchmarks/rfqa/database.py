"""Load an RFQA source database (one CSV per table) into DuckDB as the original PostgreSQL runs saw it.

The original runs imported every table into PostgreSQL (schema ``target``) with the column types declared
in the dbunibas/galois experiment configs. Loading, typing and NULL rules are the shared CSV-database
layer's (``structbench.data.csvdb``: declared types first, ``nan``/``null``/empty as NULL, names folded as
PostgreSQL folds them, schema ``target``, PostgreSQL's NULL ordering); the declared types come from the
release (``structbench.releases.relationalfactqa``). Query-side semantics (``'1'`` vs ``1``, integer
division) are handled in ``engine.py``.
"""

from __future__ import annotations

from pathlib import Path

from structbench.core.errors import DataError
from structbench.core.memo import FolderIdentity, folder_identity
from structbench.data.csvdb import (
    NUMERIC_TYPES,
    SCHEMA,
    Database,
    column_key,
    load_table,
    new_connection,
    quote,
)
from structbench.releases.relationalfactqa import db_folder, declared_types

__all__ = [
    "NUMERIC_TYPES",
    "SCHEMA",
    "Database",
    "DatabaseCache",
    "column_key",
    "db_folder",
    "load_database",
    "load_table",
    "new_connection",
    "quote",
]


def load_database(root: Path, dataset: str, db_id: str) -> Database:
    """Load every table CSV of ``dataset``/``db_id`` from the release folder ``root`` (holding ``dataset/``)."""
    key = f"{dataset}/{db_id}"
    folder_name = db_folder(dataset, db_id)
    folder = root / "dataset" / "data" / folder_name
    if not folder.is_dir():
        raise DataError(f"{folder}: database folder for {key} not found")
    db = Database(key=key)
    types = declared_types().get(folder_name, {})
    for path in sorted(folder.glob("*.csv")):
        name = column_key(path.stem)
        load_table(db, name, path, types.get(name))
    return db


class DatabaseCache:
    """Loads each database of a release folder once, on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._loaded: dict[str, Database] = {}
        self._identity: dict[str, FolderIdentity] = {}

    def get(self, dataset: str, db_id: str) -> Database:
        key = f"{dataset}/{db_id}"
        if key not in self._loaded:
            self._loaded[key] = load_database(self.root, dataset, db_id)
        return self._loaded[key]

    def table_exists(self, dataset: str, db_id: str, table: str) -> bool:
        """Whether the table's CSV is present (without loading the database)."""
        folder = self.root / "dataset" / "data" / db_folder(dataset, db_id)
        return any(column_key(p.stem) == table for p in folder.glob("*.csv"))

    def identity(self, dataset: str, db_id: str) -> FolderIdentity:
        """What the database's files are: its folder and each CSV's name, modification time and size (a changed
        file changes it), read once per cache (what is computed from the files is kept by it, ``benchmark.py``)."""
        key = f"{dataset}/{db_id}"
        if key not in self._identity:
            self._identity[key] = folder_identity(self.root / "dataset" / "data" / db_folder(dataset, db_id), "*.csv")
        return self._identity[key]
