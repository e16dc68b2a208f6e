"""What every built-in benchmark declares and ships, derived from the registry: the checklist of
``docs/develop/adding-a-benchmark.md`` that is not checked elsewhere (the tables: ``tests/test_readme.py``; the
prompts and the oracle: ``tests/prompts``; imports: ``tests/test_layers.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from structbench.benchmarks import BENCHMARKS, BUILTIN
from structbench.contract.benchmark import Benchmark
from structbench.contract.provenance import Provenance

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src" / "structbench" / "benchmarks"


def test_the_registry_holds_every_benchmark_folder() -> None:
    folders = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py") if not p.parent.name.startswith("_"))
    assert list(BUILTIN) == folders and len(BUILTIN) >= 1
    assert all(name in BENCHMARKS for name in BUILTIN)


@pytest.mark.parametrize("name", BUILTIN)
def test_the_benchmark_declares_its_contract(name: str) -> None:
    cls = BENCHMARKS.get(name)
    assert isinstance(cls, type) and issubclass(cls, Benchmark), f"{name}: BENCHMARK must be a Benchmark subclass"
    assert cls.name == name, f"{name}: BENCHMARK.name is {cls.name!r}; it must be the folder's name"
    for attribute in ("title", "summary", "headline_label"):
        value = getattr(cls, attribute, "")
        assert isinstance(value, str) and value.strip(), f"{name}: set {attribute} (the README and docs tables)"
        assert "|" not in value and "\n" not in value, f"{name}: {attribute} goes into a table row: no | or newline"
    assert isinstance(cls.provenance, Provenance) and cls.provenance.paper.strip(), (
        f"{name}: set provenance (structbench.contract.provenance.Provenance: the paper, its data and license; "
        "the README's "
        "citations and the dataset card read it)")
    assert "\n" not in cls.provenance.paper, f"{name}: provenance.paper is one line of the README's citations"
    assert cls.variants and len(set(cls.variants)) == len(cls.variants), f"{name}: variants must be unique"
    assert cls.headline in cls.metric_names, f"{name}: the headline {cls.headline!r} must be one of metric_names"
    assert issubclass(cls.Options, BaseModel)
    bench = cls()  # every option has a default: `structbench list` and `--bench NAME` build it with none
    strategies = bench.strategies()
    assert cls.default_strategy in strategies, f"{name}: default_strategy {cls.default_strategy!r} is no strategy"
    for key, strategy in strategies.items():
        assert strategy.name == key, f"{name}: strategy {key!r} is named {strategy.name!r}"
        assert strategy.description.strip(), f"{name}: strategy {key!r} needs a description (its prompt snapshots)"


@pytest.mark.parametrize("name", BUILTIN)
def test_the_benchmark_has_tests_and_a_docs_page(name: str) -> None:
    title = BENCHMARKS.get(name).title
    missing = []
    if not list((REPO / "tests" / "benchmarks" / name).glob("test_*.py")):
        missing.append(f"its own tests under tests/benchmarks/{name}/ (test_*.py)")
    page = REPO / "docs" / "benchmarks" / f"{name}.md"
    if not page.is_file():
        missing.append(f"its page docs/benchmarks/{name}.md")
    elif not re.search(rf"^# .*{re.escape(title)}", page.read_text(encoding="utf-8"), re.M):
        missing.append(f"a first heading naming {title!r} in docs/benchmarks/{name}.md")
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    if not re.search(rf":\s*benchmarks/{re.escape(name)}\.md\s*$", nav, re.M):
        missing.append(f"the page in mkdocs.yml's nav under Benchmarks ('- {title}: benchmarks/{name}.md')")
    assert not missing, f"{name}: add " + "; ".join(missing)
