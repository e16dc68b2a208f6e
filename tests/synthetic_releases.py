"""Synthetic releases written for the tests (``tests/synthetic/``, see its README): no released data.

The folder is laid out as a ``--data-dir``, each dataset in its public release's file format, so the benchmarks
read it through their own loaders. Two releases are described by a packaged manifest of every file they
publish (RelationalFactQA, StrucText-Eval), and locating one needs all of those files; ``describe_synthetic``
points those manifests at the synthetic files instead.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from structbench.benchmarks.structext import official
from structbench.data.datasets import DataContext
from structbench.releases import relationalfactqa

SYNTHETIC = Path(__file__).resolve().parent / "synthetic"


def synthetic_context() -> DataContext:
    """A ``DataContext`` reading ``tests/synthetic/`` as ``--data-dir`` (files that are not the release's, on purpose:
    ``--allow-modified-data``)."""
    return DataContext(data_dir=SYNTHETIC, offline=True, allow_modified=True)


def structext_manifest(root: Path) -> dict[str, Any]:
    """The StrucText-Eval manifest of the JSON files under ``root`` (the release's repository and commits kept)."""
    files = {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*.json"))
    }
    return {**official.manifest(), "files": files}


def clear_release_caches() -> None:
    relationalfactqa.dataset_source.cache_clear()
    official.source.cache_clear()


def describe_synthetic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the RelationalFactQA and StrucText-Eval manifests at the synthetic files (undone with ``monkeypatch``;
    call ``clear_release_caches`` after undoing)."""
    rfqa = relationalfactqa.build_manifest(SYNTHETIC / "relationalfactqa")
    structext = structext_manifest(SYNTHETIC / official.NAME)
    monkeypatch.setattr(relationalfactqa, "manifest", lambda: rfqa)
    monkeypatch.setattr(official, "manifest", lambda: structext)
    clear_release_caches()
