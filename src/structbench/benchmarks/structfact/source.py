"""Where StructFact's data comes from: the public 25-record demo, or a local copy of the full release."""

from __future__ import annotations

from pathlib import Path

from structbench.core.errors import DatasetUnavailableError
from structbench.data.datasets import DataContext, DatasetSource, RemoteFile

REPOSITORY = "https://github.com/EganGu/StructFact"
COMMIT = "f0f1f565bece94a131334ea15d03f5a9c0c7ca28"
"""The ``init`` commit (2024-08-22); the only later commit edits README.md."""

DEMO_PATH = "data/dataset_demo.json"

DEMO = DatasetSource(
    name="structfact",
    homepage=REPOSITORY,
    files=(
        RemoteFile(
            path=DEMO_PATH,
            url=f"https://raw.githubusercontent.com/EganGu/StructFact/{COMMIT}/{DEMO_PATH}",
            sha256="c16b9db13f638e51764f7d53a38055eb847442bc39d7f5a6c565a5caa0fcebff",
        ),
    ),
    license="none stated (all rights reserved)",
)
"""The demo: 25 records, 5 per challenge, 21 YES and 4 NO."""

FULL_CANDIDATES = ("data/dataset_full.json", "data/dataset_full.jsonl")
"""Where the full release is looked for under ``<data_dir>/structfact/`` when ``full_path`` is not given."""


def locate_full(data: DataContext, full_path: str | None) -> Path:
    """The full-release file: the ``full_path`` option, else a candidate under the data directory.

    The full benchmark is not published (the authors' code reads an unreleased pickle), so it is never
    downloaded; a missing file is an error saying where to put it.
    """
    if full_path:
        path = Path(full_path).expanduser()
        if not path.is_file():
            raise DatasetUnavailableError(f"structfact:full: full_path {path} is not a file")
        return path
    if data.data_dir is not None:
        for candidate in FULL_CANDIDATES:
            path = data.data_dir / DEMO.name / candidate
            if path.is_file():
                return path
    where = " or ".join(f"<data-dir>/structfact/{c}" for c in FULL_CANDIDATES)
    raise DatasetUnavailableError(
        "structfact:full: the full StructFact release is not public; pass --option full_path=FILE "
        f"(a JSON list/object or JSONL of records with the full-release columns), or put it at {where}"
    )
