"""Where generated questions get their tables: RelationalFactQA's databases, SciTab's tables, or CSV files.

``--option tables=SPEC`` is a comma-separated list of:

- ``rfqa`` (every RelationalFactQA database), or ``rfqa/<dataset>`` / ``rfqa/<dataset>/<db>`` for some;
- ``scitab`` (the 213 distinct tables of SciTab's claims, markers stripped; each its own database);
- ``synthetic`` (a fictional world of countries, cities and athletes, no download: ``synthetic.py``);
- a path: a CSV file, or a folder of CSV files (each folder holding CSV files is one database, so a
  copy of RFQA's ``dataset/data`` works too); the first line is the header.

The public releases are found through their dataset sources (``--data-dir``, the cache or a download)
and CSV files are read as text by the shared CSV layer (``structbench.data.csvdb.read_text``). All file
reading is here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from structbench.benchmarks.structfact.generated.source_table import SourceTable, make_table
from structbench.core.errors import DataError
from structbench.core.memo import FileIdentity, Memo, file_identity
from structbench.data.csvdb import read_text
from structbench.data.datasets import DataContext

_READ: Memo[tuple[str, FileIdentity], SourceTable] = Memo(4096)
"""CSV tables this process has read, by source and file identity: a second load of files that have not changed
(a test's, a sweep's cells) parses none again and returns the same tables (``profile.World.of`` then reuses its
profiles); a file that changed is read again."""


def _csv_table(path: Path, source: str) -> SourceTable:
    def read() -> SourceTable:
        header, rows = read_text(path)
        return make_table(source, path.stem, header, rows)

    return _READ.get_or_make((source, file_identity(path)), read)


def _csv_tables(paths: Sequence[Path], base: Path, prefix: str) -> list[SourceTable]:
    tables = []
    for path in paths:
        if path.stem.startswith("sqlite_"):
            continue  # SQLite bookkeeping dumped with the data
        folder = path.parent.relative_to(base).as_posix()
        tables.append(_csv_table(path, prefix if folder == "." else f"{prefix}/{folder}"))
    return tables


def csv_tables(path: Path) -> list[SourceTable]:
    """A CSV file, or every CSV file under a folder (one database per folder)."""
    path = path.expanduser()
    if path.is_file():
        return _csv_tables([path], path.parent, f"csv/{path.parent.name or 'tables'}")
    if path.is_dir():
        found = sorted(path.rglob("*.csv"))
        if not found:
            raise DataError(f"{path}: no CSV files")
        return _csv_tables(found, path, f"csv/{path.resolve().name}")
    raise DataError(f"tables={path}: no such file or folder (expected rfqa, scitab, a CSV file or a folder of them)")


def rfqa_tables(data: DataContext, spec: str) -> list[SourceTable]:
    """The RelationalFactQA databases under ``spec`` (``rfqa``, ``rfqa/<dataset>`` or ``rfqa/<dataset>/<db>``)."""
    from structbench.releases.relationalfactqa import DATA_DIR, dataset_source

    root = data.locate(dataset_source()) / DATA_DIR
    chosen = [
        p
        for p in sorted(root.rglob("*.csv"))
        if (name := "rfqa/" + p.parent.relative_to(root).as_posix()) == spec or name.startswith(spec + "/")
    ]
    if not chosen:
        raise DataError(f"tables={spec}: no RelationalFactQA database matches (rfqa/<dataset>[/<db>])")
    return _csv_tables(chosen, root, "rfqa")


def scitab_tables(data: DataContext) -> list[SourceTable]:
    """SciTab's distinct tables (by ``table_id``), captioned, with the typographic markers removed."""
    from structbench.releases.scitab import DATA_FILE, SOURCE, read_claims
    from structbench.releases.scitab.markup import clean

    tables: dict[str, SourceTable] = {}
    for record in read_claims(data.file(SOURCE, DATA_FILE)):
        if record.table_id in tables:
            continue
        header = [clean(h) for h in record.table_column_names]
        rows = [[clean(c) for c in row] for row in record.table_content_values]
        tables[record.table_id] = make_table("scitab", clean(record.table_caption), header, rows, record.table_id)
    return list(tables.values())


def load_tables(spec: str, data: DataContext) -> list[SourceTable]:
    """Every table named by ``spec`` (see the module docstring), in a fixed order."""
    tables: list[SourceTable] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if part == "synthetic":
            from structbench.benchmarks.structfact.generated.synthetic import synthetic_tables

            tables += synthetic_tables()
        elif part == "rfqa" or part.startswith("rfqa/"):
            tables += rfqa_tables(data, part.rstrip("/"))
        elif part == "scitab":
            tables += scitab_tables(data)
        else:
            tables += csv_tables(Path(part))
    if not tables:
        raise DataError(f"tables={spec!r}: names no tables")
    return tables
