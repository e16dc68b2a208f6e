"""ClaimDB's databases: the release's zip of SQLite files, opened once into the cache, read-only.

A zip is input like any other file: only its ``*.sqlite`` members are taken, each named by its file name (the
database's name), never by a path inside the zip; links are refused, and a member is read no further than the
size its header declares. The files are extracted to a private folder, then moved into place at once (a
concurrent run finds them whole or not at all), in a folder named by the zip's contents, and made read-only.
A folder beside the zip named as it (``test_databases/``, the zip unpacked by hand) is used as it is."""

from __future__ import annotations

import hashlib
import shutil
import stat
import zipfile
from pathlib import Path

from structbench.core.atomic import make_folders, move_into_place, placed_by_another, staging_dir
from structbench.core.errors import DataError, StorageError
from structbench.data.datasets import cache_root

SUFFIX = ".sqlite"
CHUNK = 1 << 20


def _members(zf: zipfile.ZipFile, path: Path) -> dict[str, zipfile.ZipInfo]:
    """The zip's SQLite files by database name; links and repeated names are refused."""
    found: dict[str, zipfile.ZipInfo] = {}
    for info in zf.infolist():
        name = info.filename.rsplit("/", 1)[-1]
        if info.is_dir() or not name.endswith(SUFFIX) or name.startswith("."):
            continue
        if stat.S_ISLNK(info.external_attr >> 16):
            raise DataError(f"{path}: {info.filename} is a link, not a database file")
        db = name[: -len(SUFFIX)]
        if db in found:
            raise DataError(f"{path}: two databases named {db!r} ({found[db].filename}, {info.filename})")
        found[db] = info
    if not found:
        raise DataError(f"{path}: no *.sqlite database in the zip")
    return found


def _fingerprint(members: dict[str, zipfile.ZipInfo]) -> str:
    """A digest of what the zip holds (names, sizes, CRCs), so a changed zip is extracted again."""
    h = hashlib.sha256()
    for db, info in sorted(members.items()):
        h.update(f"{db}\0{info.file_size}\0{info.CRC}\0".encode())
    return h.hexdigest()[:16]


def _copy(zf: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, path: Path) -> None:
    """One member to ``target``, refusing more bytes than its header declares (the zip module checks the CRC)."""
    written = 0
    with zf.open(info) as src, target.open("wb") as out:
        while chunk := src.read(CHUNK):
            written += len(chunk)
            if written > info.file_size:
                raise DataError(f"{path}: {info.filename} holds more than the {info.file_size} bytes it declares")
            out.write(chunk)
    target.chmod(0o444)


def open_databases(zip_path: Path) -> dict[str, Path]:
    """Database name -> its read-only SQLite file, for the release's zip at ``zip_path``."""
    unpacked = zip_path.with_suffix("")
    if unpacked.is_dir():
        files = {p.stem: p for p in sorted(unpacked.rglob(f"*{SUFFIX}"))}
        if files:
            return files
    try:
        with zipfile.ZipFile(zip_path) as zf:
            members = _members(zf, zip_path)
            folder = cache_root() / "claimdb-databases" / _fingerprint(members)
            if not folder.is_dir():
                _extract(zf, members, folder, zip_path)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError) as err:
        raise DataError(f"{zip_path}: cannot read the databases' zip ({err})") from err
    return {db: folder / f"{db}{SUFFIX}" for db in sorted(members)}


def _extract(zf: zipfile.ZipFile, members: dict[str, zipfile.ZipInfo], folder: Path, path: Path) -> None:
    make_folders(folder.parent)
    work = staging_dir(folder)
    try:
        for db, info in members.items():
            _copy(zf, info, work / f"{db}{SUFFIX}", path)
        work.chmod(0o755)  # the sandbox's uid reads the files in place
        try:
            move_into_place(work, folder)
        except OSError as err:
            if not placed_by_another(err, folder):  # (then another run extracted the same zip first: its copy)
                raise StorageError(f"{folder}: cannot be written ({err.strerror or err}): the databases of "
                                   f"{path} are extracted there") from err
    finally:
        shutil.rmtree(work, ignore_errors=True)
