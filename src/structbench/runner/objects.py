"""``evaluate``'s model and benchmarks given as objects (a ``Backend``, a ``Benchmark`` class or instance) rather
than names: each is named as a run names it, a benchmark class registered for this process as a plugin would be."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from structbench.backends.base import Backend
from structbench.contract.benchmark import Benchmark
from structbench.core.errors import UsageError

BenchItem = str | Benchmark[Any] | type[Benchmark[Any]]
BenchArgument = BenchItem | Sequence[BenchItem] | None
"""``evaluate``'s ``bench``: names (``BENCH[:VARIANT]``, one comma-separated string or a list), benchmark classes or
instances, or a list mixing them."""


def model_name(model: object, caller: str) -> object:
    """``model`` as ``BACKEND[:NAME]`` (a ``Backend`` object by its ``backend`` and ``model``); anything else is
    returned as given, for the options' check to name."""
    if not isinstance(model, Backend):
        return model
    if not getattr(model, "backend", None):
        raise UsageError(f"{caller}(model={type(model).__name__}(...)): a backend object needs its 'backend' name")
    name = getattr(model, "model", None)
    return model.backend if not name or name == model.backend else f"{model.backend}:{name}"


def _registered(cls: type[Benchmark[Any]], caller: str) -> str:
    """The name ``cls`` runs under, registered in ``BENCHMARKS`` if it is not yet; a name another class holds is a
    ``UsageError``."""
    from structbench.benchmarks import BENCHMARKS

    name = getattr(cls, "name", "")
    if not isinstance(name, str) or not name:
        raise UsageError(f"{caller}(bench={cls.__name__}): a benchmark class needs its 'name'")
    if name not in BENCHMARKS:
        BENCHMARKS.register(name, cls)
    elif BENCHMARKS.get(name) is not cls:
        raise UsageError(f"{caller}(bench={cls.__name__}): the name {name!r} is another benchmark's; give the class "
                         "a name of its own")
    return name


def bench_names(bench: object, caller: str) -> tuple[object, dict[str, str]]:
    """``bench`` as names (objects registered), and the options of the instances among it (``BENCH.KEY`` -> text, as
    ``--option`` gives them); anything else is returned as given, for the options' check to name."""
    from structbench.runner.configure import option_text

    single = isinstance(bench, Benchmark) or (isinstance(bench, type) and issubclass(bench, Benchmark))
    items = [bench] if single else bench
    if isinstance(items, str) or not isinstance(items, Sequence):
        return bench, {}
    if not any(isinstance(i, Benchmark | type) for i in items):
        return bench, {}
    names: list[object] = []
    options: dict[str, str] = {}
    for item in items:
        if isinstance(item, Benchmark):
            name = _registered(type(item), caller)
            dumped = item.options.model_dump(mode="json", exclude_unset=True)
            options |= {f"{name}.{key}": option_text(value) for key, value in dumped.items()}
        elif isinstance(item, type) and issubclass(item, Benchmark):
            name = _registered(item, caller)
        else:
            names.append(item)
            continue
        names.append(name)
    return names, options
