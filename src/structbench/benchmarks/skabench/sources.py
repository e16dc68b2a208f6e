"""Where the builder's databases come from: the RelationalFactQA release (by database), or SciTab's tables.

The RFQA release publishes each database as a folder of CSV tables, ``dataset/data/<source>/<db>/<table>.csv``.
The data layer (``structbench.releases.relationalfactqa``) pins every file's URL and SHA-256, so any one
database can be fetched (and verified) on its own, and loads it with the declared column types. SciTab's
file is read, and its cell markers removed, by the data layer too (``structbench.releases.scitab``).
"""

from __future__ import annotations

from pathlib import Path

from structbench.benchmarks.skabench.database import Database
from structbench.data import csvdb
from structbench.data.datasets import DataContext
from structbench.releases import relationalfactqa, scitab
from structbench.releases.scitab.markup import clean


def load_rfqa_database(database: str, data: DataContext) -> Database:
    """One RFQA database, located (or downloaded and verified) through ``data``."""
    return Database.from_store(relationalfactqa.load_database(database, data, keep_text=True))


def load_scitab_database(path: Path, limit: int | None = None) -> Database:
    """SciTab's tables (``sci_tab.json``) as one database, a table per distinct ``table_id``.

    Headers and cells lose SciTab's ``[BOLD]``/``[ITALIC]`` markers and ``[EMPTY]`` cells are empty (the
    release's ``markup.clean``); unnamed columns are numbered; tables whose column names collide once folded
    are left out. Tables are named ``t<n>_<paper_id>`` in file order.
    """
    tables: dict[str, tuple[list[str], list[list[str]]]] = {}
    seen: set[str] = set()
    for record in scitab.read_claims(path):
        if record.table_id in seen:
            continue
        seen.add(record.table_id)
        header = [clean(h) or f"column_{j + 1}" for j, h in enumerate(record.table_column_names)]
        if len({csvdb.column_key(h) for h in header}) != len(header):
            continue
        rows = [[clean(c) for c in row] for row in record.table_content_values]
        tables[f"t{len(tables)}_{record.paper_id.replace('.', '_')}"] = (header, rows)
        if limit is not None and len(tables) >= limit:
            break
    return Database.from_tables(path.stem, tables)
