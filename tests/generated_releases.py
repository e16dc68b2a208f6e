"""Releases that ``../shared/datasets`` does not hold, written by ``structbench generate`` in their public layout.

The tests that run every benchmark (``--bench all``, every Inspect task, every export format) read one
``--data-dir``: ``shared_datasets`` (``tests/conftest.py``) is ``../shared/datasets`` with, beside its releases, a
small seeded set for each benchmark here whose release is not there. Nothing generated is stored in the
repository; a real release placed in ``../shared/datasets`` is used instead.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def _claimdb(out: Path) -> None:
    from structbench.benchmarks.claimdb.generator import write_set

    write_set(out, seed=0)


def _tablebench(out: Path) -> None:
    from structbench.benchmarks.tablebench.generate import write_set

    write_set(out, seed=0)


def _databench(out: Path) -> None:
    from structbench.benchmarks.databench.generator import write_set

    write_set(out, count=2, rows=60, seed=0)


GENERATORS: dict[str, Callable[[Path], None]] = {
    "claimdb": _claimdb,
    "databench": _databench,
    "tablebench": _tablebench,
}
"""Dataset folder -> what writes a set of it under a ``--data-dir`` (``DIR/<folder>/...``)."""


def datasets_dir(shared: Path, root: Path) -> Path:
    """``root`` made a ``--data-dir``: links to every release of ``shared``, then the generated sets it lacks."""
    root.mkdir(parents=True, exist_ok=True)
    for entry in sorted(shared.iterdir()):
        (root / entry.name).symlink_to(entry.resolve(), target_is_directory=entry.is_dir())
    for folder, write in GENERATORS.items():
        if not (root / folder).exists():
            write(root)
    return root
