"""The benchmark registry: each subpackage ``structbench.benchmarks.<name>`` exports ``BENCHMARK``.

Discovery is by folder, and the import is lazy, so listing names costs nothing and adding a benchmark
touches no shared file. Benchmarks of other distributions come from the ``structbench.benchmarks`` entry
points, and from modules named in ``STRUCTBENCH_PLUGINS`` (``structbench.core.plugins``).
"""

from __future__ import annotations

import pkgutil

from structbench.contract.benchmark import Benchmark
from structbench.core.plugins import BENCHMARK_GROUP, import_env_plugins, plugins
from structbench.core.registry import Registry

BENCHMARKS: Registry[type[Benchmark]] = Registry("benchmark")

BUILTIN: tuple[str, ...] = tuple(sorted(
    info.name for info in pkgutil.iter_modules(__path__) if info.ispkg and not info.name.startswith("_")
))
"""The benchmarks of this package, by folder: the README's and the docs' tables, the prompt snapshots and the
contract tests cover exactly these."""

for _name in BUILTIN:
    BENCHMARKS.register(_name, f"{__name__}.{_name}:BENCHMARK")

for _plugin in plugins(BENCHMARK_GROUP, default_attr="BENCHMARK"):
    BENCHMARKS.add_plugin(_plugin.name, _plugin.target, _plugin.origin)  # a taken name clashes: never shadowed

__all__ = ["BENCHMARKS", "BUILTIN"]

import_env_plugins()
