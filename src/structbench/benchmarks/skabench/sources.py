"""Where the builder's databases come from: the RelationalFactQA release (by database), or SciTab's tables.

The RFQA release publishes each database as a folder of CSV tables,
``dataset/data/<source>/<db>/<table>.csv``. The RFQA benchmark's own ``DatasetSource`` pins every
file's URL and SHA-256, so any one database can be fetched (and verified) on its own.
"""

from __future__ import annotations

import json
from pathlib import Path

from structbench.benchmarks.rfqa.source import dataset_source as rfqa_release
from structbench.benchmarks.skabench.database import Database
from structbench.datasets import DataContext, DatasetSource
from structbench.errors import DataError, UsageError

RFQA_PREFIX = "dataset/data"


def _tables(database: str | None = None) -> list[str]:
    """Release paths of the CSV tables (of one ``<source>/<db>``), ``sqlite_*`` bookkeeping files left out."""
    prefix = f"{RFQA_PREFIX}/{database.strip('/')}/" if database else f"{RFQA_PREFIX}/"
    return [
        f.path
        for f in rfqa_release().files
        if f.path.startswith(prefix) and f.path.endswith(".csv") and not f.path.rsplit("/", 1)[1].startswith("sqlite_")
    ]


def rfqa_databases() -> list[str]:
    """``<source>/<db>`` names of the databases in the RFQA release."""
    return sorted({path[len(RFQA_PREFIX) + 1 :].rsplit("/", 1)[0] for path in _tables()})


def rfqa_source(database: str) -> DatasetSource:
    """The CSV tables of one RFQA database, with the release's URLs and checksums."""
    release = rfqa_release()
    wanted = set(_tables(database))
    files = tuple(f for f in release.files if f.path in wanted and not f.optional)
    if not files:
        raise UsageError(f"skabench: no RFQA database {database!r}; known: {', '.join(rfqa_databases())}")
    return DatasetSource(name=release.name, homepage=release.homepage, files=files, license=release.license)


def load_rfqa_database(database: str, data: DataContext) -> Database:
    """One RFQA database, located (or downloaded and verified) through ``data``."""
    source = rfqa_source(database)
    root = data.locate(source)
    folder = root / RFQA_PREFIX / database.strip("/")
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
