"""Import boundaries: no benchmark imports another, the core and data layers import none, no import cycle, and no
module imports from a layer above its own (``structbench.testing.architecture``).

What several benchmarks share lives below them (``structbench.releases``, ``structbench.data.csvdb``, ``data``);
the core finds benchmarks through the registry (``structbench.benchmarks.BENCHMARKS``), never by name. Every
import statement counts, at module level or inside a function, absolute or relative, and so do
``importlib.import_module("...")`` calls with a literal name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import structbench
from structbench.testing.architecture import imported_names

PACKAGE = Path(structbench.__file__).resolve().parent
BENCHMARKS = PACKAGE / "benchmarks"
BENCHMARK_NAMES = sorted(p.name for p in BENCHMARKS.iterdir() if (p / "__init__.py").is_file())
CORE = ("core", "stats", "data", "releases", "backends", "contract", "papers", "runfiles", "analysis", "runner",
        "report")
"""Folders under ``structbench`` that must not import any benchmark."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def benchmarks_imported(path: Path) -> set[str]:
    """The benchmarks (``structbench.benchmarks.<name>``) the module at ``path`` imports."""
    names = imported_names(path.read_text(encoding="utf-8"), module_name(path), is_package=path.name == "__init__.py")
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
    names = imported_names(source, "structbench.benchmarks.structfact.loader", is_package=False)
    assert {
        "structbench.benchmarks.rfqa.queries",
        "structbench.benchmarks.skabench",
        "structbench.benchmarks.scitab.source.read_claims",  # as written: a name in the module scitab.source
        "structbench.benchmarks.structfact.prompts",
        "structbench.benchmarks.structext.official",
        "structbench.benchmarks.BENCHMARKS",
    } <= names
    assert len(BENCHMARK_NAMES) >= 5 and {"rfqa", "scitab", "skabench", "structext", "structfact"} <= set(
        BENCHMARK_NAMES
    )
    # a real module: SciTab reads its release from the data layer and imports its own modules
    scitab = (BENCHMARKS / "scitab" / "benchmark.py").read_text()
    own = imported_names(scitab, "structbench.benchmarks.scitab.benchmark", is_package=False)
    assert any(name.startswith("structbench.benchmarks.scitab.source.") for name in own)
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


BACKEND_MODULES = {p.stem for p in (PACKAGE / "backends").glob("*.py")} - {"__init__", "base", "tokens", "usage",
                                                                           "prices"}
"""Modules that build or run models; ``backends.base`` (and the package) only hold request and response types, and
``tokens``, ``usage`` and ``prices`` are what a benchmark may count and price with."""


def backends_imported(path: Path) -> set[str]:
    """The model-running backend modules the module at ``path`` imports."""
    source = path.read_text(encoding="utf-8")
    return backend_modules(imported_names(source, module_name(path), is_package=path.name == "__init__.py"))


def backend_modules(names: set[str]) -> set[str]:
    return {
        parts[2]
        for parts in (name.split(".") for name in names)
        if parts[:2] == ["structbench", "backends"] and len(parts) > 2 and parts[2] in BACKEND_MODULES
    }


def test_the_backend_walk_sees_a_backend_import() -> None:
    assert {"hf", "llamacpp", "vllm_offline"} <= BACKEND_MODULES
    module = PACKAGE / "benchmarks" / "structfact" / "truncation.py"
    source = "from structbench.backends.base import Request\ndef f():\n    from ...backends import llamacpp\n"
    assert backend_modules(imported_names(source, module_name(module), is_package=False)) == {"llamacpp"}
    assert backends_imported(module) == set()  # the real module counts tokens through structbench.backends.tokens


@pytest.mark.parametrize("name", BENCHMARK_NAMES)
def test_no_benchmark_imports_a_backend(name: str) -> None:
    """Benchmarks reach models and tokenizers through the core (``benchmark.other_model``,
    ``structbench.backends.tokens``)."""
    offending = [
        f"{path.relative_to(PACKAGE.parent)} imports structbench.backends.{module}"
        for path in modules(BENCHMARKS / name)
        for module in sorted(backends_imported(path))
    ]
    assert not offending, "\n".join(offending)


# -- one-way dependencies: no import cycle, no import from a layer above --------------------------------------------

SRC = PACKAGE.parent


def write_package(root: Path, files: dict[str, str]) -> Path:
    """A throwaway ``structbench`` package under ``root`` (its ``src``), for checking the checks."""
    for name, text in files.items():
        path = root / "structbench" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_graph_counts_lazy_type_only_relative_and_dynamic_imports(tmp_path: Path) -> None:
    from structbench.testing.architecture import import_graph

    src = write_package(tmp_path, {
        "__init__.py": "",
        "a/__init__.py": "from structbench.a.b import thing\n",
        "a/b.py": "thing = 1\n",
        "a/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from structbench.d import x\n",
        "d.py": "def f():\n    from .a import c\n    import importlib\n    importlib.import_module('structbench.e')\n",
        "e.py": "from structbench.a import b\n",
    })
    graph = import_graph(src)
    assert graph["structbench.a"] == {"structbench.a.b"}  # a name in a.b: the module a.b
    assert graph["structbench.a.c"] == {"structbench.d"}  # under TYPE_CHECKING
    assert graph["structbench.d"] == {"structbench.a.c", "structbench.e"}  # lazy, relative, import_module
    assert graph["structbench.e"] == {"structbench.a.b"}  # ``from a import b``, b a module: a.b only
    strict = import_graph(src, strict=True)
    assert strict["structbench.e"] == {"structbench.a.b", "structbench.a"}  # importing a.b runs a/__init__ first
    assert strict["structbench.a"] == {"structbench.a.b"}  # from inside a package its own __init__ is not added


def test_the_cycle_check_finds_a_lazy_cycle(tmp_path: Path) -> None:
    from structbench.testing.architecture import cycles, import_graph

    src = write_package(tmp_path, {
        "__init__.py": "",
        "x.py": "from structbench.y import f\n",
        "y.py": "def f():\n    from structbench.x import g\n",
        "z.py": "from structbench import x\n",
    })
    assert cycles(import_graph(src)) == [["structbench.x", "structbench.y"]]


@pytest.mark.parametrize("strict", [False, True], ids=["imports", "imports-and-package-inits"])
def test_no_import_cycles(strict: bool) -> None:
    """Zero cycles among structbench's modules, lazy and type-only imports included; with ``strict``, also counting
    that importing ``a.b.c`` runs the ``__init__`` of ``a.b`` (the root package, the public facade, aside)."""
    from structbench.testing.architecture import cycles, import_graph

    graph = import_graph(SRC, strict=strict)
    assert len(graph) > 200
    found = cycles(graph)
    assert not found, "import cycles (move what both sides need one layer down):\n" + "\n".join(
        " <-> ".join(c) for c in found
    )


def test_every_module_is_in_a_layer_and_imports_none_above() -> None:
    from structbench.testing.architecture import LAYERS, import_graph, layer_of, upward_imports

    graph = import_graph(SRC)
    assert not [m for m in graph if layer_of(m) < 0], "add the module to a layer of structbench.testing.architecture"
    up = upward_imports(graph)
    assert not up, "imports from a layer above:\n" + "\n".join(
        f"{a} ({LAYERS[layer_of(a)].name}) imports {b} ({LAYERS[layer_of(b)].name})" for a, b in up
    )


def test_a_layer_violation_is_seen(tmp_path: Path) -> None:
    from structbench.testing.architecture import import_graph, upward_imports

    src = write_package(tmp_path, {"__init__.py": "", "core/__init__.py": "",
                                   "core/errors.py": "from structbench.runner import run\n",
                                   "runner/__init__.py": "", "runner/run.py": ""})
    assert upward_imports(import_graph(src)) == [("structbench.core.errors", "structbench.runner.run")]


def test_no_two_folders_import_each_other() -> None:
    """Each folder sits wholly above or below each of its siblings (and, at the root, of each module): no pair imports
    the other both ways, through any of their modules (the layers hold folders, so a folder split across two
    layers would show here first)."""
    from structbench.testing.architecture import import_graph, mutual_packages

    for strict in (False, True):
        pairs = mutual_packages(import_graph(SRC, strict=strict))
        assert not pairs, "folders importing each other (move what both need below both):\n" + "\n".join(
            f"{a} <-> {b}" for a, b in pairs)


def test_a_pair_of_folders_importing_each_other_is_seen(tmp_path: Path) -> None:
    """Two folders that import each other through different modules (no module cycle), deeper folders too, and a
    root module with a folder."""
    from structbench.testing.architecture import cycles, import_graph, mutual_packages

    src = write_package(tmp_path, {
        "__init__.py": "",
        "runner/__init__.py": "", "runner/run.py": "from structbench.batch import steps\n", "runner/calls.py": "",
        "batch/__init__.py": "", "batch/steps.py": "def f():\n    from structbench.runner import calls\n",
        "report/__init__.py": "", "report/a/__init__.py": "", "report/b/__init__.py": "",
        "report/a/x.py": "from structbench.report.b import y\n", "report/b/y.py": "",
        "report/b/z.py": "import structbench.report.a.w\n", "report/a/w.py": "",
        "tokens.py": "from structbench.backends import factory\n", "backends/__init__.py": "",
        "backends/factory.py": "", "backends/hf.py": "from structbench import tokens\n",
    })
    graph = import_graph(src)
    assert cycles(graph) == []
    assert mutual_packages(graph) == [
        ("structbench.backends", "structbench.tokens"),
        ("structbench.batch", "structbench.runner"),
        ("structbench.report.a", "structbench.report.b"),
    ]


@pytest.mark.parametrize("reader", ["report", "interop"])
def test_the_run_directory_readers_import_the_run_files_not_the_runner(reader: str) -> None:
    """Report and interop read a run directory through the run-files layer (``structbench.runfiles.rundir``), not the
    runner that writes it: they import the run files and what lies below them, the analysis (paired tests), and
    interop the report it hands trackers; nothing of the runner or above."""
    from structbench.testing.architecture import LAYERS, import_graph, layer_of

    graph = import_graph(SRC)
    names = [layer.name for layer in LAYERS]
    allowed = names.index("report" if reader == "interop" else "analysis")
    assert names.index("run files") < names.index("analysis") < names.index("runner") < names.index("report")
    reaching = sorted((m, t) for m, targets in graph.items() if m.startswith(f"structbench.{reader}")
                      for t in targets if not t.startswith(f"structbench.{reader}") and layer_of(t) > allowed)
    assert not reaching
    assert any(t.startswith("structbench.runfiles.rundir") for m, ts in graph.items()
               if m.startswith(f"structbench.{reader}") for t in ts)


@pytest.mark.parametrize("old", ["benchmark", "provenance", "datasets", "csvdb", "tokens", "errors"])
def test_the_paths_promised_to_plugin_authors_still_import(old: str) -> None:
    """A plugin written against an earlier guide (``from structbench.benchmark import Benchmark``) keeps working:
    the root re-export holds the same objects as the folder's module."""
    import importlib

    from structbench.testing.architecture import SHIMS

    assert old in SHIMS
    shim = importlib.import_module(f"structbench.{old}")  # built, so tools/dev/move_layers.py leaves it alone
    source = (PACKAGE / f"{old}.py").read_text(encoding="utf-8")
    (target,) = [n.removeprefix("structbench.") for n in imported_names(source, f"structbench.{old}", is_package=False)
                 if n.endswith(".*")]
    module = importlib.import_module(f"structbench.{target.removesuffix('.*')}")
    public = getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")])
    assert public and all(getattr(shim, n) is getattr(module, n) for n in public)


TESTS = Path(__file__).resolve().parent
REPOSITORY_TESTS = {"test_api.py", "test_readme.py", "test_layers.py", "test_contributing.py"}
"""The top of ``tests/`` holds the tests of the root modules (``structbench.api``) and of the repository as a whole."""
CROSSCUTTING = {"prompts", "synthetic"}
"""Folders of ``tests/`` that are not a package's: every strategy's prompts pinned, the synthetic releases' data."""


def test_the_tests_mirror_the_package() -> None:
    """A module's tests lie in the folder of ``tests/`` named like the module's package (``tests/runfiles`` for
    ``structbench.runfiles``): every folder of tests is a package's (or a named cross-cutting one), and no test file
    at the top tests a module that lives in a folder (``tools/dev/move_tests.py`` moved them)."""
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and any(p.rglob("test_*.py"))}
    assert not {f for f in folders - CROSSCUTTING if not (PACKAGE / f / "__init__.py").is_file()}
    top = {p.name for p in TESTS.glob("test_*.py")}
    assert top <= REPOSITORY_TESTS, sorted(top - REPOSITORY_TESTS)
    nested = {p.relative_to(TESTS).parent for p in TESTS.rglob("test_*.py")} - {Path(".")}
    assert all((PACKAGE / d / "__init__.py").is_file() or d.parts[0] in CROSSCUTTING for d in nested), sorted(
        str(d) for d in nested if not (PACKAGE / d / "__init__.py").is_file() and d.parts[0] not in CROSSCUTTING)
