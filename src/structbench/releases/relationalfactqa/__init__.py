"""The RelationalFactQA release: its files with checksums, its databases, and their declared column types.

The release publishes each database as a folder of CSV tables, ``dataset/data/<source>/<db>/<table>.csv``,
and the queries as ``dataset/RelationalFactQA.csv``. The file list lives in ``manifest.json`` beside this
module (regenerate it with ``python -m structbench.releases.relationalfactqa DATASET_DIR``). Five table
files are in the release's git tree but not in the published snapshot; they are marked ``optional``.
``column_types.json`` holds the column types the original runs declared (the dbunibas/galois experiment
configs, the dataset's ``galois_column_types.json``): schema only, no rows.
"""

from __future__ import annotations

import hashlib
import json
import sys
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from structbench.core.errors import DataError, UsageError
from structbench.data import csvdb
from structbench.data.datasets import DataContext, DatasetSource, RemoteFile

REPOSITORY = "dario-tnn/relational-fact-qa"
COMMIT = "31b934035c8250c05e5f8ef46888b27ed6841a5e"
"""The snapshot named in the dataset's SOURCE.md (2025-11-24)."""
RAW_BASE = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/"
QUERIES_FILE = "dataset/RelationalFactQA.csv"
DATA_DIR = "dataset/data"
MISSING_IN_RELEASE = (
    "dataset/data/bird/address/zip_data.csv",
    "dataset/data/bird/college_completion/institution_grads.csv",
    "dataset/data/bird/college_completion/state_sector_grads.csv",
    "dataset/data/bird/olympics/person.csv",
    "dataset/data/galois/movies/movie.csv",
)
"""Table files in the release's tree whose blobs are absent from the published snapshot."""
FOLDER_ALIASES = {"galois/world1": "galois/world_1"}
"""``dataset/db_id`` keys of the queries file whose folder is named differently in the release."""


def build_manifest(root: Path) -> dict[str, Any]:
    """The manifest for a local copy of the release at ``root``: every CSV with its SHA-256."""
    paths = [QUERIES_FILE, *sorted(p.relative_to(root).as_posix() for p in (root / DATA_DIR).rglob("*.csv"))]
    files: list[dict[str, Any]] = []
    for rel in paths:
        digest = hashlib.sha256((root / rel).read_bytes()).hexdigest()
        files.append({"path": rel, "url": RAW_BASE + rel, "sha256": digest, "optional": False})
    files.extend(
        {"path": rel, "url": RAW_BASE + rel, "sha256": None, "optional": True}
        for rel in MISSING_IN_RELEASE
        if rel not in paths
    )
    return {"repository": REPOSITORY, "commit": COMMIT, "files": files}


@cache
def manifest() -> dict[str, Any]:
    """The packaged manifest."""
    data: dict[str, Any] = json.loads(resources.files(__package__).joinpath("manifest.json").read_text("utf-8"))
    return data


@cache
def dataset_source() -> DatasetSource:
    """The whole release as a ``DatasetSource``."""
    files = tuple(
        RemoteFile(path=f["path"], url=f["url"], sha256=f["sha256"], optional=f["optional"])
        for f in manifest()["files"]
    )
    return DatasetSource(
        name="relationalfactqa",
        homepage=f"https://github.com/{REPOSITORY}",
        files=files,
        license="none stated (source databases from BIRD, Spider, Galois and QATCH/YAGO)",
    )


def db_folder(dataset: str, db_id: str) -> str:
    """The folder (under ``dataset/data``) holding the tables of ``dataset``/``db_id``."""
    key = f"{dataset}/{db_id}"
    return FOLDER_ALIASES.get(key, key)


@cache
def declared_types() -> dict[str, dict[str, dict[str, str]]]:
    """``{"dataset/folder": {table: {column: galois type}}}``, names folded by ``csvdb.column_key``."""
    raw = json.loads(resources.files(__package__).joinpath("column_types.json").read_text(encoding="utf-8"))
    return {
        FOLDER_ALIASES.get(db, db): {
            csvdb.column_key(t): {csvdb.column_key(c): ty for c, ty in cols.items()} for t, cols in tables.items()
        }
        for db, tables in raw.items()
    }


def table_files(database: str | None = None) -> list[str]:
    """Release paths of the CSV tables (of one ``<source>/<db>`` folder), ``sqlite_*`` bookkeeping left out."""
    prefix = f"{DATA_DIR}/{database.strip('/')}/" if database else f"{DATA_DIR}/"
    return [
        f.path
        for f in dataset_source().files
        if f.path.startswith(prefix) and f.path.endswith(".csv") and not f.path.rsplit("/", 1)[1].startswith("sqlite_")
    ]


def databases() -> list[str]:
    """``<source>/<db>`` folder names of the databases in the release."""
    return sorted({path[len(DATA_DIR) + 1 :].rsplit("/", 1)[0] for path in table_files()})


def database_source(database: str) -> DatasetSource:
    """The CSV tables of one database folder (``<source>/<db>``), with the release's URLs and checksums."""
    release = dataset_source()
    wanted = set(table_files(database))
    files = tuple(f for f in release.files if f.path in wanted and not f.optional)
    if not files:
        raise UsageError(f"no RelationalFactQA database {database!r}; known: {', '.join(databases())}")
    return DatasetSource(name=release.name, homepage=release.homepage, files=files, license=release.license)


def load_database(database: str, data: DataContext, *, keep_text: bool = False) -> csvdb.Database:
    """One database folder's tables (``sqlite_*`` left out), located or downloaded and verified through
    ``data``, typed with the declared column types."""
    folder_name = database.strip("/")
    source = database_source(folder_name)
    root = data.locate(source)
    types = declared_types().get(folder_name, {})
    return csvdb.load_folder(
        root / DATA_DIR / folder_name,
        key=folder_name,
        tables=[Path(f.path).stem for f in source.files],
        declared=types,
        keep_text=keep_text,
    )


def main(argv: list[str] | None = None) -> None:
    """Write ``manifest.json`` from a local copy of the release (``DATASET_DIR`` holds ``dataset/``)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python -m structbench.releases.relationalfactqa DATASET_DIR")
    out = Path(__file__).with_name("manifest.json")
    try:
        out.write_text(json.dumps(build_manifest(Path(args[0])), indent=1) + "\n", encoding="utf-8")
    except OSError as err:
        raise DataError(f"{out}: cannot write ({err})") from err
    print(f"wrote {out}")


__all__ = [
    "COMMIT",
    "DATA_DIR",
    "MISSING_IN_RELEASE",
    "QUERIES_FILE",
    "REPOSITORY",
    "build_manifest",
    "database_source",
    "databases",
    "dataset_source",
    "db_folder",
    "declared_types",
    "load_database",
    "main",
    "manifest",
    "table_files",
]
