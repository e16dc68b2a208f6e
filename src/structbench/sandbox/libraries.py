"""Installed libraries a sandboxed program may import (``run_python(..., libraries=("pandas",))``).

A library is an installed distribution (``pandas``, ``numpy``) or a top-level module it provides. The sandbox gets
exactly the files of that distribution and of everything it requires (its metadata's requirements whose markers hold
here, extras left out), bound read-only at their own paths, and a directory of links to them on the program's
``sys.path``: nothing else of the environment is visible or importable, and nothing of it can be changed.
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
from functools import cache

THREAD_ENV = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}
"""One thread per numeric library: every thread counts against the program's process limit (RLIMIT_NPROC), and a
BLAS that starts one per core would fail to start under it."""


def _distribution(name: str) -> metadata.Distribution:
    """The installed distribution called ``name``, or the one that provides the top-level module ``name``."""
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        pass
    providers = metadata.packages_distributions().get(name, [])
    if providers:
        return metadata.distribution(providers[0])
    raise ValueError(f"sandbox library {name!r} is not installed in this environment")


def _requirements(dist: metadata.Distribution) -> list[str]:
    """Names of what ``dist`` requires here (no extras; requirements whose markers do not hold left out)."""
    from packaging.markers import UndefinedEnvironmentName
    from packaging.requirements import InvalidRequirement, Requirement

    names = []
    for line in dist.requires or ():
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        try:
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
        except UndefinedEnvironmentName:
            continue
        names.append(req.name)
    return names


def _top_levels(dist: metadata.Distribution) -> list[str]:
    """Absolute paths of the distribution's top-level entries in its site directory (its RECORD)."""
    tops: list[str] = []
    for file in dist.files or ():
        parts = file.parts
        if not parts or parts[0] in ("..", "__pycache__") or os.path.isabs(str(file)):
            continue  # scripts installed elsewhere; the shared bytecode directory
        path = os.path.realpath(str(file.locate()))
        top = path if len(parts) == 1 else os.path.realpath(str(dist.locate_file(parts[0])))
        if top not in tops:
            tops.append(top)
    return tops


@cache
def resolve(names: tuple[str, ...]) -> tuple[str, ...]:
    """The top-level files and directories of ``names`` and of everything they require (``.../site-packages/pandas``,
    ``.../six.py``); ``ValueError`` naming one that is not installed."""
    seen: set[str] = set()
    paths: list[str] = []
    queue = list(names)
    if not queue:
        return ()
    from packaging.utils import canonicalize_name  # here: the sandbox without libraries needs the standard library only

    while queue:
        name = queue.pop(0)
        key = str(canonicalize_name(name))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = _distribution(name)
        except ValueError:
            if name in names:
                raise
            continue  # a requirement this environment satisfies otherwise (the standard library's backport)
        paths.extend(p for p in _top_levels(dist) if p not in paths and os.path.exists(p))
        queue.extend(_requirements(dist))
    return tuple(paths)
