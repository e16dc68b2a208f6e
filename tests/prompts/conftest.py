"""The data the pinned prompts are built from: synthetic releases written for these tests.

``synthetic/`` is laid out as a ``--data-dir`` (``<dir>/<dataset>/<path>``), each dataset in its public
release's own file format, so every benchmark reads it through its real loader. No record of a public release
is copied here: the prompts pin templates, serializations and demonstrations, not the data.

Two releases are described by a packaged manifest of every file they publish (RelationalFactQA's 153 CSV
files, StrucText-Eval's 1,624 JSON files), and locating a release needs all of them. ``synthetic_data``
points those manifests at the synthetic files for the duration of one test.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from structbench.benchmarks.structext import official
from structbench.datasets import DataContext
from structbench.releases import relationalfactqa

SYNTHETIC = Path(__file__).resolve().parent / "synthetic"


def structext_manifest(root: Path) -> dict[str, Any]:
    """The StrucText-Eval manifest of the files under ``root`` (the release's commits kept)."""
    files = {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*.json"))
    }
    return {**official.manifest(), "files": files}


@pytest.fixture
def synthetic_data(monkeypatch: pytest.MonkeyPatch) -> Iterator[DataContext]:
    """A ``DataContext`` reading ``synthetic/`` as ``--data-dir``, with the release manifests describing it."""
    rfqa = relationalfactqa.build_manifest(SYNTHETIC / "relationalfactqa")
    structext = structext_manifest(SYNTHETIC / official.NAME)
    monkeypatch.setattr(relationalfactqa, "manifest", lambda: rfqa)
    monkeypatch.setattr(official, "manifest", lambda: structext)
    relationalfactqa.dataset_source.cache_clear()
    official.source.cache_clear()
    yield DataContext(data_dir=SYNTHETIC, offline=True)
    monkeypatch.undo()
    relationalfactqa.dataset_source.cache_clear()
    official.source.cache_clear()
