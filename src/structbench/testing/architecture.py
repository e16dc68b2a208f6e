"""structbench's structure as its imports draw it: the module graph, its cycles, and the layers it keeps.

The graph is read from the source with ``ast``, every import counted: at module level or inside a function (a lazy
import), under ``if TYPE_CHECKING``, relative or absolute, and ``importlib.import_module("...")`` with a literal
name. ``from a.b import c`` depends on the module ``a.b.c`` when there is one, else on ``a.b`` (the reading of
grimp and import-linter). The stricter reading (``strict=True``) adds what Python also runs: importing ``a.b.c``
executes the ``__init__`` of ``a.b`` and ``a`` first, so an importer depends on those packages too (the ones it is
not inside already); the root package, whose ``__init__`` is the public facade (``structbench.evaluate``), is left
out of that reading.

``LAYERS`` names the layers bottom up; a module may import its own layer and those below, never one above.
``tests/test_layers.py`` checks both (no cycle, no import upward) and the docs' Architecture page is drawn from
``layer_edges`` (``docs/hooks/generated.py``).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = "structbench"

Graph = dict[str, set[str]]
"""Module -> the modules of the package it imports."""


@dataclass(frozen=True)
class Layer:
    """One layer: what it is for, and the modules in it (a name stands for the module and everything under it)."""

    name: str
    role: str
    modules: tuple[str, ...]


SHIMS = ("benchmark", "provenance", "datasets", "csvdb", "tokens", "errors")
"""Root modules that only re-export a module of a folder, at the paths the docs promise plugin authors
(and the errors' module, where library users catch typed errors)."""

LAYERS: tuple[Layer, ...] = (
    Layer("core", "errors and exit codes, atomic files, secrets' redaction, registries and plugins, user YAML read "
          "safely, untrusted names and archives checked, forked work, work kept per process by file identity, the "
          "version", ("core",)),
    Layer("statistics", "bootstrap intervals, paired tests, multiple comparisons and confusion matrices, over any "
          "scored outcomes", ("stats",)),
    Layer("data", "samples, evidence and gold; datasets found, checked and read; CSV tables as one DuckDB database; "
          "the public releases; the sandbox and the tools a model queries data with",
          ("data", "releases", "sandbox", "toolbox")),
    Layer("models", "model clients behind one request/response interface, their tokenizers, token usage and prices",
          ("backends",)),
    Layer("contract", "what the core and a benchmark agree on: the Benchmark and Strategy interfaces, provenance, "
          "the papers' tables, shared strategies", ("contract", "papers", "strategies")),
    Layer("benchmarks", "the benchmarks, each a folder; the registry that finds them; the papers' presets",
          ("benchmarks",)),
    Layer("run files", "a run's configuration, manifest, records and their columns, results and scored outcomes, a "
          "sweep's cells, progress, the format's version, Inspect logs' layout, and the one reader of a run directory",
          ("runfiles",)),
    Layer("analysis", "paired tests over records and a sweep's robustness, shared by metrics.json and the report; "
          "metrics.json computed from records",
          ("analysis",)),
    Layer("runner", "a run: configuration, selections, jobs, executors (one process, forked workers, Ray), batch "
          "APIs, the response cache, records and metrics", ("runner",)),
    Layer("report", "tables, figures, intervals, comparisons and leaderboards over run directories", ("report",)),
    Layer("interop", "the run in the ecosystem's formats (Inspect logs, lm-eval files, Hugging Face datasets) and "
          "experiment trackers", ("interop",)),
    Layer("api", "the Python entry point: structbench.evaluate and evaluate_suite", ("api",)),
    Layer("entry points", "the command line, runs followed live (structbench view), tools over a benchmark and the "
          "runner, the Inspect tasks, test servers, the re-exports the docs promise plugin authors",
          ("cli", "view", "tools", "inspect_tasks", "testing", "__main__", "", *SHIMS)),
)
"""Bottom up. ``""`` is the root package (``structbench/__init__.py``)."""


def module_names(src: Path) -> dict[str, Path]:
    """Every module under ``src`` (the folder holding the ``structbench`` package) by dotted name."""
    names = {}
    for path in sorted((src / ROOT).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _is_module_call(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return (name in ("import_module", "__import__") and bool(node.args) and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str))


def imported_names(source: str, module: str, *, is_package: bool) -> set[str]:
    """The dotted names ``source`` (the text of ``module``) imports, as written (``from a import b``: ``a.b``, which
    may be a module or a name in ``a``)."""
    return set(_imported_names(source, module, is_package))


@lru_cache(maxsize=4096)
def _imported_names(source: str, module: str, is_package: bool) -> frozenset[str]:
    """``imported_names``, each text parsed once per process: the layer checks read the package a dozen times
    (``import_graph`` in each reading, each folder's walk), and parsing was nearly all their time. Keyed by the
    text itself, so an edited module is parsed again."""
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
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and _is_module_call(node):
            names.add(node.args[0].value)  # type: ignore[attr-defined]
    return frozenset(names)


def _resolve(name: str, modules: Iterable[str]) -> str | None:
    """The module ``name`` is or lies in (``a.b.c`` -> ``a.b`` when ``c`` is a name in it); None outside the package."""
    known = set(modules)
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(src: Path, *, strict: bool = False) -> Graph:
    """The package's modules and what each imports (see the module docstring for both readings)."""
    modules = module_names(src)
    graph: Graph = {name: set() for name in modules}
    for name, path in modules.items():
        for raw in imported_names(path.read_text(encoding="utf-8"), name, is_package=path.name == "__init__.py"):
            target = _resolve(raw, modules)
            if target is None or target == name:
                continue
            graph[name].add(target)
            if strict:
                graph[name].update(p for p in _ancestors(target) if p != ROOT and not _inside(name, p) and p != name)
    return graph


def _ancestors(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (each sorted), by Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _placed(module: str) -> tuple[int, str]:
    """The layer index and the ``LAYERS`` entry ``module`` falls under (the most specific one); (-1, "") for none."""
    rel = module.removeprefix(ROOT).removeprefix(".")
    best, best_entry = -1, ""
    for i, layer in enumerate(LAYERS):
        for entry in layer.modules:
            matches = rel == "" if entry == "" else _inside(rel, entry)
            if matches and (best < 0 or len(entry) > len(best_entry)):
                best, best_entry = i, entry
    return best, best_entry


def layer_of(module: str) -> int:
    """The index in ``LAYERS`` of the layer ``module`` belongs to; -1 when it is in none."""
    return _placed(module)[0]


def upward_imports(graph: Mapping[str, set[str]]) -> list[tuple[str, str]]:
    """``(importer, imported)`` pairs where a module imports from a layer above its own."""
    return sorted((m, t) for m, targets in graph.items() for t in targets if layer_of(t) > layer_of(m))


def package_imports(graph: Mapping[str, set[str]], packages: Iterable[str]) -> dict[str, set[str]]:
    """Package -> the other packages (of ``packages``, none inside another) whose modules its modules import."""
    names = sorted(packages)

    def owner(module: str) -> str | None:
        return next((p for p in names if _inside(module, p)), None)

    found: dict[str, set[str]] = {p: set() for p in names}
    for m, targets in graph.items():
        a = owner(m)
        for t in targets:
            b = owner(t)
            if a is not None and b is not None and a != b:
                found[a].add(b)
    return found


def mutual_packages(graph: Mapping[str, set[str]]) -> list[tuple[str, str]]:
    """Pairs of sibling folders (packages with the same parent, at any depth; at the root, its modules too) that
    import each other, one way through one module and back through another: each should sit wholly above or below
    the other."""
    packages = {m for m in graph if m != ROOT and any(t.startswith(m + ".") for t in graph)}
    top = {m for m in graph if m.count(".") == 1}
    pairs: set[tuple[str, str]] = set()
    for parent in {p.rpartition(".")[0] for p in packages}:
        siblings = top if parent == ROOT else {p for p in packages if p.rpartition(".")[0] == parent}
        imports = package_imports(graph, siblings)
        pairs.update((a, b) for a in imports for b in imports[a] if a < b and a in imports[b])
    return sorted(pairs)


def layer_edges(graph: Mapping[str, set[str]]) -> dict[str, dict[str, int]]:
    """Layer -> the layers below it that its modules import, with how many module-to-module imports each."""
    edges: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for m, targets in graph.items():
        for t in targets:
            a, b = layer_of(m), layer_of(t)
            if a != b and a >= 0 and b >= 0:
                edges[LAYERS[a].name][LAYERS[b].name] += 1
    return {k: dict(v) for k, v in edges.items()}


def layer_diagram(graph: Mapping[str, set[str]]) -> str:
    """The layers top down as a Markdown table: each layer's modules, role and the layers it imports (from the
    code)."""
    edges = layer_edges(graph)
    members: dict[int, set[str]] = defaultdict(set)
    for m in graph:
        i, entry = _placed(m)
        members[i].add(entry or ROOT)
    rows = ["| layer | modules | role | imports (module imports) |", "| --- | --- | --- | --- |"]
    for i in reversed(range(len(LAYERS))):
        layer = LAYERS[i]
        below = edges.get(layer.name, {})
        uses = ", ".join(f"{name} ({below[name]})" for name in (lay.name for lay in reversed(LAYERS[:i]))
                         if name in below)
        names = ", ".join(f"`{n}`" for n in sorted(members[i]))
        rows.append(f"| **{layer.name}** | {names} | {layer.role} | {uses or '–'} |")
    return "\n".join(rows)
