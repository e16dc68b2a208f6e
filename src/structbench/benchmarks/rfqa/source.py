"""Where RelationalFactQA comes from: the public release, file by file, with checksums.

The file list lives in ``manifest.json`` beside this module (regenerate it with
``python -m structbench.benchmarks.rfqa.source DATASET_DIR``). Five table files are in the release's
git tree but not in the published snapshot we mirror; they are marked ``optional`` and every query
that needs them is reported as having no gold (see ``gold.py``).
"""

from __future__ import annotations

import hashlib
import json
import sys
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from structbench.datasets import DatasetSource, RemoteFile

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
    text = resources.files(__package__).joinpath("manifest.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def dataset_source() -> DatasetSource:
    """The RelationalFactQA release as a ``DatasetSource``."""
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


def main(argv: list[str] | None = None) -> None:
    """Write ``manifest.json`` from a local copy of the release (``DATASET_DIR`` holds ``dataset/``)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python -m structbench.benchmarks.rfqa.source DATASET_DIR")
    out = Path(__file__).with_name("manifest.json")
    out.write_text(json.dumps(build_manifest(Path(args[0])), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
