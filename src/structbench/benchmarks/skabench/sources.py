"""Where the builder's databases come from: the RelationalFactQA release (by database), or SciTab's tables.

The RFQA release publishes each database as a folder of CSV tables,
``dataset/data/<source>/<db>/<table>.csv``. ``rfqa_files.json`` lists every table's SHA-256 at the
snapshot commit, so any one database can be fetched (and verified) on its own.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from structbench.benchmarks.skabench.database import Database
from structbench.datasets import DataContext, DatasetSource, RemoteFile
from structbench.errors import DataError, UsageError

RFQA_NAME = "relationalfactqa"
RFQA_HOMEPAGE = "https://github.com/dario-tnn/relational-fact-qa"


@lru_cache(maxsize=1)
def _manifest() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((Path(__file__).parent / "rfqa_files.json").read_text())
    return data


def rfqa_databases() -> list[str]:
    """``<source>/<db>`` names of the databases in the RFQA release."""
    return sorted({path.rsplit("/", 1)[0] for path in _manifest()["files"]})


def rfqa_source(database: str) -> DatasetSource:
    """The CSV tables of one RFQA database (``sqlite_*`` bookkeeping files left out)."""
    manifest = _manifest()
    prefix = f"{database.strip('/')}/"
    files = tuple(
        RemoteFile(
            path=f"{manifest['prefix']}/{path}",
            url=f"https://raw.githubusercontent.com/{manifest['repository']}/{manifest['commit']}/"
            f"{manifest['prefix']}/{path}",
            sha256=entry["sha256"],
        )
        for path, entry in sorted(manifest["files"].items())
        if path.startswith(prefix) and not path.rsplit("/", 1)[1].startswith("sqlite_")
    )
    if not files:
        raise UsageError(f"skabench: no RFQA database {database!r}; known: {', '.join(rfqa_databases())}")
    return DatasetSource(name=RFQA_NAME, homepage=RFQA_HOMEPAGE, files=files)


def load_rfqa_database(database: str, data: DataContext) -> Database:
    """One RFQA database, located (or downloaded and verified) through ``data``."""
    source = rfqa_source(database)
    root = data.locate(source)
    folder = root / _manifest()["prefix"] / database.strip("/")
    tables = [Path(f.path).stem for f in source.files]
    return Database.from_csv_folder(folder, name=database.strip("/"), tables=tables)


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
        if len(set(header)) != len(header) or any(len(r) != len(header) for r in rows):
            continue
        paper = str(record.get("paper_id", "paper")).replace(".", "_")
        tables[f"t{len(tables)}_{paper}"] = (header, rows)
        if limit is not None and len(tables) >= limit:
            break
    return Database.from_tables(path.stem, tables)
