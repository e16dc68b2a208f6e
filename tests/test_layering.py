"""Benchmarks import no backend and no other benchmark; they reach models and tokenizers through the
core (``benchmark.other_model``, ``benchmark.check_model``, ``structbench.tokens``)."""

from __future__ import annotations

import ast
from pathlib import Path

import structbench

PACKAGE = Path(structbench.__file__).parent
BENCHMARKS = PACKAGE / "benchmarks"
BACKEND_MODULES = {p.stem for p in (PACKAGE / "backends").glob("*.py")} - {"__init__", "base"}
"""Modules that build or run models; ``backends.base`` (and the package) only hold request/response types."""

KNOWN = {
    ("skabench/build.py", "structbench.backends.factory"),
    ("skabench/sources.py", "structbench.benchmarks.rfqa.source"),
}
"""Left to issue #15 (the SKA-Bench synthesis command through a model pool; RFQA's file list from the
datasets layer)."""


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, ``from PACKAGE import MODULE`` counted as ``PACKAGE.MODULE``."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def offends(rel: str, name: str) -> bool:
    parts = name.split(".")
    if parts[:2] != ["structbench", "backends"] and parts[:2] != ["structbench", "benchmarks"]:
        return False
    if parts[1] == "backends":
        return len(parts) > 2 and parts[2] in BACKEND_MODULES
    own = rel.split("/")[0]
    return rel != "__init__.py" and len(parts) > 2 and parts[2] != own  # the registry names each lazily


def test_benchmarks_import_no_backend_and_no_other_benchmark() -> None:
    offences = [
        f"{rel}: {name}"
        for path in sorted(BENCHMARKS.rglob("*.py"))
        for rel in [path.relative_to(BENCHMARKS).as_posix()]
        for name in sorted(imported_modules(path))
        if offends(rel, name) and not any(rel == k and name.startswith(m) for k, m in KNOWN)
    ]
    assert offences == []


def test_the_check_sees_an_offence() -> None:
    assert offends("structfact/truncation.py", "structbench.backends.llamacpp")
    assert offends("skabench/sources.py", "structbench.benchmarks.rfqa.source")
    assert not offends("structfact/prompts.py", "structbench.backends.base.Request")
    assert not offends("structfact/prompts.py", "structbench.backends.Request")
    assert not offends("structfact/prompts.py", "structbench.benchmarks.structfact.truncation")
