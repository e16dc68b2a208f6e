"""The ``generated`` variant's items: QATCH-style pairs from your own tables, run like RFQA's.

``--option path=P`` names either a JSONL file written by the generator (``generator.write_pairs``,
``python -m structbench.benchmarks.rfqa.generator``) or a CSV file or folder of CSV files, from
which pairs are generated on the fly with the run's seed and ``per_category``.

Each item keeps its source tables when they are at hand, because the CoT method asks for the base
data of every table the query reads and its oracle answers from them. Generated on the fly, they are
the loaded CSVs. From JSONL, they are the ``data`` path the generator recorded on each line
(relative paths resolve against the JSONL file's folder) or ``--option data=P`` for all lines; the
SQL is then run again and its row count compared with the file's gold (``ok``, ``count_mismatch`` or
``error`` in the gold report). Without the tables the gold comes from the file unchecked
(``unchecked``) and only the NL and SQL methods can run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import duckdb
from sqlglot.errors import SqlglotError

from structbench.benchmarks.rfqa.database import Database
from structbench.benchmarks.rfqa.engine import to_duckdb
from structbench.benchmarks.rfqa.generator import GeneratedPair, generate_from, load_tables, read_pairs
from structbench.benchmarks.rfqa.gold import GoldResult, GoldStatus
from structbench.core.errors import DataError

log = logging.getLogger(__name__)

PAIRS_SUFFIX = ".jsonl"
DB_PREFIX = "generated/"
"""Sample ``meta["db"]`` of generated items: ``generated/<name of the source tables>``."""


@dataclass
class GeneratedItem:
    """One pair with the database it runs on (None when its tables are not at hand)."""

    pair: GeneratedPair
    db_key: str
    database: Database | None
    check: GoldResult
    """The gold check: re-execution of the SQL against the pair's gold row count."""


def load_items(path: Path, *, per_category: int, seed: int, data: str | None = None) -> list[GeneratedItem]:
    """The items for ``--option path=...`` (see the module docstring)."""
    path = path.expanduser()
    if not path.exists():
        raise DataError(f"{path}: not found (expected a .jsonl file of generated pairs, a .csv file or a folder)")
    if path.is_file() and path.suffix.lower() == PAIRS_SUFFIX:
        if data is not None:
            tables = Path(data).expanduser().resolve()
            if not tables.exists():
                raise DataError(f"{data}: source tables not found (--option data)")
            data = str(tables)
        return _from_pairs(path, data)
    if path.is_dir() or path.suffix.lower() == ".csv":
        if data is not None:
            raise DataError(f"{path}: --option data applies only to a .jsonl file of pairs")
        db = load_tables(path)
        pairs = generate_from(
            db,
            per_category=per_category,
            seed=seed,
            data=str(path.resolve()),
            note=lambda line: log.warning("rfqa: %s: %s", path, line),
        )
        if not pairs:
            raise DataError(f"{path}: no pair could be generated from these tables")
        key = DB_PREFIX + path.resolve().stem
        return [GeneratedItem(p, key, db, _ok(p)) for p in pairs]
    raise DataError(f"{path}: expected a .jsonl file of generated pairs, a .csv file or a folder of CSV files")


def _ok(pair: GeneratedPair) -> GoldResult:
    n = len(pair.rows)
    return GoldResult(pair.id, GoldStatus.OK, n, tuples=n)


def _source(spec: str | dict[str, str], base: Path) -> Path | dict[str, Path]:
    def resolve(p: str) -> Path:
        path = Path(p).expanduser()
        return path if path.is_absolute() else base / path

    return {t: resolve(p) for t, p in spec.items()} if isinstance(spec, Mapping) else resolve(spec)


def _present(source: Path | dict[str, Path]) -> bool:
    return all(p.is_file() for p in source.values()) if isinstance(source, dict) else source.exists()


class _Databases:
    """The source databases of a JSONL file, each loaded once, with a unique key per source."""

    def __init__(self, pairs_file: Path) -> None:
        self.pairs_file = pairs_file
        self._by_spec: dict[str, tuple[str, Database | None, str]] = {}

    def get(self, spec: str | dict[str, str] | None) -> tuple[str, Database | None, str]:
        """(key, database or None, why it is None)."""
        if spec is None:
            return DB_PREFIX + self.pairs_file.stem, None, "the line names no source tables (data)"
        ident = json.dumps(spec, sort_keys=True)
        if ident not in self._by_spec:
            source = _source(spec, self.pairs_file.parent)
            name = source.stem if isinstance(source, Path) else "-".join(sorted(source))
            key = DB_PREFIX + name
            used = {k for k, _, _ in self._by_spec.values()}
            n = 1
            while key in used:
                n += 1
                key = f"{DB_PREFIX}{name}_{n}"
            if _present(source):
                self._by_spec[ident] = (key, load_tables(source), "")
            else:
                why = f"source tables not found at {source}"
                log.warning("rfqa: %s: %s; gold is taken unchecked and CoT cannot run", self.pairs_file, why)
                self._by_spec[ident] = (key, None, why)
        return self._by_spec[ident]


def _check(pair: GeneratedPair, db: Database) -> GoldResult:
    expected = len(pair.rows)
    try:
        _, _, rows = db.execute(to_duckdb(pair.sql, db.tables))
    except (duckdb.Error, SqlglotError) as err:
        return GoldResult(pair.id, GoldStatus.ERROR, expected, reason=f"execution failed: {err}")
    if len(rows) != expected:
        return GoldResult(
            pair.id,
            GoldStatus.COUNT_MISMATCH,
            expected,
            tuples=len(rows),
            reason=f"executed {len(rows)} row(s), the file's gold has {expected}",
        )
    return GoldResult(pair.id, GoldStatus.OK, expected, tuples=len(rows))


def _from_pairs(path: Path, data: str | None) -> list[GeneratedItem]:
    databases = _Databases(path)
    items: list[GeneratedItem] = []
    for pair in read_pairs(path):
        key, db, why = databases.get(data if data is not None else pair.data)
        if db is None:
            check = GoldResult(pair.id, GoldStatus.UNCHECKED, len(pair.rows), reason=why)
        else:
            check = _check(pair, db)
            if check.status is not GoldStatus.OK:
                log.warning("rfqa: %s: %s %s: %s", path, pair.id, check.status.value, check.reason)
        items.append(GeneratedItem(pair, key, db, check))
    return items
