"""Import boundaries: no benchmark imports another, and the core and data layers import none.

What several benchmarks share lives below them (``structbench.releases``, ``structbench.csvdb``, ``data``);
the core finds benchmarks through the registry (``structbench.benchmarks.BENCHMARKS``), never by name. Every
import statement counts, at module level or inside a function, absolute or relative, and so do
``importlib.import_module("...")`` calls with a literal name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import structbench

PACKAGE = Path(structbench.__file__).resolve().parent
BENCHMARKS = PACKAGE / "benchmarks"
BENCHMARK_NAMES = sorted(p.name for p in BENCHMARKS.iterdir() if (p / "__init__.py").is_file())
CORE = ("backends", "runner", "report", "stats", "data", "datasets", "releases", "csvdb")
"""Packages and modules under ``structbench`` that must not import any benchmark."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, module: str, *, is_package: bool = False) -> set[str]:
    """Every module name ``source`` (the text of ``module``) imports; ``from a import b`` gives ``a`` and ``a.b``."""
    package = module if is_package else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)
    return names


def benchmarks_imported(path: Path) -> set[str]:
    """The benchmarks (``structbench.benchmarks.<name>``) the module at ``path`` imports."""
    names = imported(path.read_text(encoding="utf-8"), module_name(path), is_package=path.name == "__init__.py")
    found = set()
    for name in names:
        parts = name.split(".")
        if parts[:2] == ["structbench", "benchmarks"] and len(parts) > 2 and parts[2] in BENCHMARK_NAMES:
            found.add(parts[2])
    return found


def modules(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py")) if root.is_dir() else [root.with_suffix(".py")]


def test_the_walk_sees_every_kind_of_import() -> None:
    source = (
        "import structbench.benchmarks.rfqa.queries\n"
        "from structbench.benchmarks import skabench\n"
        "def f():\n    from ..scitab.source import read_claims\n"
        "    from . import prompts\n"
        "importlib.import_module('structbench.benchmarks.structext.official')\n"
        "from structbench.benchmarks import BENCHMARKS\n"
    )
    names = imported(source, "structbench.benchmarks.structfact.loader")
    assert {
        "structbench.benchmarks.rfqa.queries",
        "structbench.benchmarks.skabench",
        "structbench.benchmarks.scitab.source",
        "structbench.benchmarks.structfact.prompts",
        "structbench.benchmarks.structext.official",
        "structbench.benchmarks.BENCHMARKS",
    } <= names
    assert len(BENCHMARK_NAMES) >= 5 and {"rfqa", "scitab", "skabench", "structext", "structfact"} <= set(
        BENCHMARK_NAMES
    )
    # a real module: SciTab reads its release from the data layer and imports its own modules
    own = imported((BENCHMARKS / "scitab" / "benchmark.py").read_text(), "structbench.benchmarks.scitab.benchmark")
    assert "structbench.benchmarks.scitab.source" in own
    assert benchmarks_imported(BENCHMARKS / "scitab" / "benchmark.py") == {"scitab"}


@pytest.mark.parametrize("name", BENCHMARK_NAMES)
def test_no_benchmark_imports_another(name: str) -> None:
    offending = [
        f"{path.relative_to(PACKAGE.parent)} imports structbench.benchmarks.{other}"
        for path in modules(BENCHMARKS / name)
        for other in sorted(benchmarks_imported(path) - {name})
    ]
    assert not offending, "move what both need below the benchmarks (structbench.releases, csvdb, data):\n" + "\n".join(
        offending
    )


@pytest.mark.parametrize("layer", CORE)
def test_the_core_and_data_layers_import_no_benchmark(layer: str) -> None:
    paths = modules(PACKAGE / layer)
    assert paths and all(p.is_file() for p in paths)
    offending = [
        f"{path.relative_to(PACKAGE.parent)} imports structbench.benchmarks.{bench}"
        for path in paths
        for bench in sorted(benchmarks_imported(path))
    ]
    assert not offending, "the core reaches benchmarks through the registry only:\n" + "\n".join(offending)
