"""The benchmark registry: each subpackage ``structbench.benchmarks.<name>`` exports ``BENCHMARK``.

Discovery is by folder, and the import is lazy, so listing names costs nothing and adding a benchmark
touches no shared file.
"""

from __future__ import annotations

import pkgutil

from structbench.benchmark import Benchmark
from structbench.registry import Registry

BENCHMARKS: Registry[type[Benchmark]] = Registry("benchmark")

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.ispkg and not _info.name.startswith("_"):
        BENCHMARKS.register(_info.name, f"{__name__}.{_info.name}:BENCHMARK")

__all__ = ["BENCHMARKS"]


def _load_plugins() -> None:
    """Import the modules named in ``STRUCTBENCH_PLUGINS`` (comma-separated); they register more benchmarks."""
    import importlib
    import os

    from structbench.errors import UsageError

    for module in filter(None, (m.strip() for m in os.environ.get("STRUCTBENCH_PLUGINS", "").split(","))):
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise UsageError(f"STRUCTBENCH_PLUGINS: cannot import {module!r}: {err}") from err


_load_plugins()
