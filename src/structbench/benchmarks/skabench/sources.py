"""Where the builder's databases come from: the RelationalFactQA release (by database), or SciTab's tables.

The RFQA release publishes each database as a folder of CSV tables, ``dataset/data/<source>/<db>/<table>.csv``.
The data layer (``structbench.releases.relationalfactqa``) pins every file's URL and SHA-256, so any one
database can be fetched (and verified) on its own, and loads it with the declared column types.
"""

from __future__ import annotations

import json
from pathlib import Path

from structbench import csvdb
from structbench.benchmarks.skabench.database import Database
from structbench.datasets import DataContext
from structbench.errors import DataError
from structbench.releases import relationalfactqa


def load_rfqa_database(database: str, data: DataContext) -> Database:
    """One RFQA database, located (or downloaded and verified) through ``data``."""
    return Database.from_store(relationalfactqa.load_database(database, data, keep_text=True))


def load_scitab_database(path: Path, limit: int | None = None) -> Database:
    """SciTab's tables (``sci_tab.json``) as one database, a table per distinct ``table_id``.

    Cells lose SciTab's ``[BOLD] `` marker; tables are named ``t<n>_<paper_id>`` in file order.
    """
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise DataError(f"{path}: cannot read SciTab JSON ({err})") from err
    tables: dict[str, tuple[list[str], list[list[str]]]] = {}
    seen: set[str] = set()
    for i, record in enumerate(records):
        try:
            table_id = record["table_id"]
            header = [str(h).strip() or f"column_{j + 1}" for j, h in enumerate(record["table_column_names"])]
            rows = [[str(c).replace("[BOLD] ", "") for c in row] for row in record["table_content_values"]]
        except (KeyError, TypeError) as err:
            raise DataError(f"{path}: record {i}: missing field {err}") from None
        if table_id in seen:
            continue
        seen.add(table_id)
        if len({csvdb.column_key(h) for h in header}) != len(header) or any(len(r) != len(header) for r in rows):
            continue
        paper = str(record.get("paper_id", "paper")).replace(".", "_")
        tables[f"t{len(tables)}_{paper}"] = (header, rows)
        if limit is not None and len(tables) >= limit:
            break
    return Database.from_tables(path.stem, tables)
