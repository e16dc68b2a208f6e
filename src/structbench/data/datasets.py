"""Where benchmark data comes from: a local copy, the download cache, or the public source.

A dataset is a folder of files at known paths. Resolution order: ``--data-dir`` /
``STRUCTBENCH_DATA_DIR`` (``<dir>/<dataset>/<path>``), then the cache (``STRUCTBENCH_CACHE``, default
``~/.cache/structbench``), then a download from the public URL into the cache, verified by SHA-256
and moved into place atomically, so an interrupted download never leaves a half-written file.
``STRUCTBENCH_MIRROR`` replaces every public URL with ``<mirror>/<dataset>/<path>``.

A local copy is checked the same way: each file the release publishes with a checksum must have it, or the
run stops with a ``DataError`` naming the file, unless the user says the copy is modified on purpose
(``allow_modified``, ``--allow-modified-data``); the files that differ are then listed in ``modified``
(and in the run's manifest).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from structbench.core.atomic import atomic_path
from structbench.core.errors import DataError, DatasetUnavailableError


@dataclass(frozen=True)
class RemoteFile:
    """One file of a dataset: its place in the dataset folder and where it is published."""

    path: str
    """Path relative to the dataset folder (the layout of the public release)."""
    url: str
    sha256: str | None = None
    """Expected SHA-256 of the published bytes; checked after every download."""
    optional: bool = False
    """Missing from some releases; loaders must cope (and report) when it is absent."""


@dataclass(frozen=True)
class DatasetSource:
    """A public dataset: its folder name, homepage and files."""

    name: str
    homepage: str
    files: tuple[RemoteFile, ...]
    license: str = "unknown"


@dataclass(frozen=True)
class ModifiedFile:
    """A file of a local copy that differs from the release (used because the user allowed it)."""

    dataset: str
    path: str
    """Relative to the dataset folder."""
    sha256: str
    release_sha256: str

    def to_json(self) -> dict[str, str]:
        return {"dataset": self.dataset, "path": self.path, "sha256": self.sha256,
                "release_sha256": self.release_sha256}


_digests: dict[tuple[str, int, int, int], str] = {}
"""SHA-256 of local files already read by this process, by (path, inode, size, modification time)."""


def file_sha256(path: Path) -> str:
    """The SHA-256 of ``path``, computed once per version of the file in this process."""
    st = path.stat()
    key = (str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _digests:
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        _digests[key] = digest.hexdigest()
    return _digests[key]


def read_data_text(path: Path, encoding: str = "utf-8", what: str = "") -> str:
    """The text of a data file; one that cannot be read (``what``: what it holds, for the message), or is not valid
    ``encoding`` (a release's files are UTF-8), is a ``DataError`` naming the file and the line of the first bad
    byte."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise DataError(f"{path}: cannot read {what} ({err})" if what else
                        f"{path}: cannot read: {err.strerror or err}") from err
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise DataError(f"{path}:{line}: not {encoding.upper()} text (byte 0x{data[err.start]:02x} at offset "
                        f"{err.start}: {err.reason})") from None


def cache_root() -> Path:
    """The download cache (``STRUCTBENCH_CACHE`` or ``~/.cache/structbench``)."""
    env = os.environ.get("STRUCTBENCH_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "structbench"


@dataclass(frozen=True)
class DataContext:
    """How a benchmark finds its data for this run."""

    data_dir: Path | None = None
    """A local copy laid out as ``<data_dir>/<dataset>/<path>``; None means cache + download."""
    offline: bool = False
    """Never download (a missing file is an error telling what to fetch)."""
    timeout: float = 60.0
    dir_flag: str = "--data-dir"
    """How the user gives the data directory, as error messages name it: ``--data-dir`` on the command line,
    ``-T data_dir=`` for an Inspect task."""
    allow_modified: bool = False
    """Use local files that differ from the release (the user modified them on purpose) instead of refusing them."""
    modified: list[ModifiedFile] = field(default_factory=list, compare=False)
    """The local files used although they differ from the release, in the order met."""

    @classmethod
    def from_env(
        cls, data_dir: str | Path | None = None, offline: bool = False, allow_modified: bool = False,
        dir_flag: str = "--data-dir",
    ) -> DataContext:
        chosen = data_dir or os.environ.get("STRUCTBENCH_DATA_DIR")
        return cls(data_dir=Path(chosen).expanduser() if chosen else None, offline=offline,
                   allow_modified=allow_modified, dir_flag=dir_flag)

    def dir_argument(self, value: str = "DIR") -> str:
        """``--data-dir DIR``, or ``-T data_dir=DIR`` for Inspect."""
        return f"{self.dir_flag}{value}" if self.dir_flag.endswith("=") else f"{self.dir_flag} {value}"

    def locate(self, source: DatasetSource) -> Path:
        """The folder holding ``source``'s files, downloading missing required files into the cache."""
        given = f"{self.dir_flag.rstrip('=')} / STRUCTBENCH_DATA_DIR"
        if self.data_dir is not None:
            if not self.data_dir.is_dir():
                raise DatasetUnavailableError(f"{given} {self.data_dir}: no such directory")
            root = self.data_dir / source.name
            missing = [f.path for f in source.files if not f.optional and not (root / f.path).is_file()]
            if missing:
                raise DatasetUnavailableError(
                    f"{source.name}: {len(missing)} file(s) missing under {root} (from {given}), e.g. {missing[0]}. "
                    f"Fetch them from {source.homepage}."
                )
            self._check_local(source, root)
            return root
        root = cache_root() / "datasets" / source.name
        for f in source.files:
            target = root / f.path
            if target.is_file():
                continue
            if self.offline:
                if f.optional:
                    continue
                raise DatasetUnavailableError(self._fetch_hint(source, f, root))
            try:
                self._download(source, f, target)
            except DataError:
                raise
            except Exception as err:
                if f.optional:
                    continue
                raise DatasetUnavailableError(f"{self._fetch_hint(source, f, root)} ({err})") from err
        return root

    def _check_local(self, source: DatasetSource, root: Path) -> None:
        """Every file of ``source`` present under ``root`` has the release's checksum (where it publishes one); a
        file that differs is a ``DataError`` naming it, or, when allowed, is recorded in ``modified``."""
        differ: list[ModifiedFile] = []
        for f in source.files:
            path = root / f.path
            if f.sha256 is None or (f.optional and not path.is_file()):
                continue
            try:
                digest = file_sha256(path)
            except OSError as err:
                raise DataError(f"{path}: cannot be read: {err.strerror or err}") from err
            if digest != f.sha256:
                differ.append(ModifiedFile(source.name, f.path, digest, f.sha256))
        if differ and not self.allow_modified:
            first = differ[0]
            more = f" (and {len(differ) - 1} more of its files)" if len(differ) > 1 else ""
            raise DataError(
                f"{root / first.path}: differs from the {source.name} release{more}: SHA-256 {first.sha256[:16]}..., "
                f"the release's {first.release_sha256[:16]}... Restore it from {source.homepage}, or pass "
                "--allow-modified-data to evaluate the modified copy (the run's manifest lists every such file)"
            )
        seen = {(m.dataset, m.path) for m in self.modified}
        self.modified.extend(m for m in differ if (m.dataset, m.path) not in seen)

    def file(self, source: DatasetSource, path: str) -> Path:
        """The local path of one file of ``source``."""
        return self.locate(source) / path

    @staticmethod
    def _url(source: DatasetSource, f: RemoteFile) -> str:
        mirror = os.environ.get("STRUCTBENCH_MIRROR")
        return f"{mirror.rstrip('/')}/{source.name}/{f.path}" if mirror else f.url

    def _fetch_hint(self, source: DatasetSource, f: RemoteFile, root: Path) -> str:
        return (
            f"{source.name}: cannot get {f.path}. Download {f.url} to {root / f.path}, "
            f"or pass {self.dir_argument()} (or set STRUCTBENCH_DATA_DIR) where DIR/{source.name}/{f.path} exists."
        )

    def _download(self, source: DatasetSource, f: RemoteFile, target: Path) -> None:
        import httpx

        url = self._url(source, f)
        digest = hashlib.sha256()
        with atomic_path(target) as tmp:
            with tmp.open("wb") as out, httpx.stream("GET", url, timeout=self.timeout, follow_redirects=True) as resp:
                resp.raise_for_status()
                for chunk in resp.iter_bytes(1 << 16):
                    digest.update(chunk)
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            if f.sha256 and digest.hexdigest() != f.sha256:
                raise DataError(
                    f"{source.name}: checksum mismatch for {f.path} from {url}: "
                    f"expected {f.sha256}, got {digest.hexdigest()}"
                )
