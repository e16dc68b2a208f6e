"""A benchmark added by following docs/develop/adding-a-benchmark.md alone: in a copy of the repository, the
guide's files are written and its commands run, its benchmark passes mypy, and the checks it names see the new
benchmark (they fail, naming it, until its checklist is done, and pass after), and ``structbench run -m oracle``
scores it 1.0. The nested pytest runs are narrowed to what the new benchmark can change (``AFFECTED``, ``BEFORE``):
the suite itself runs the rest."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import shared_datasets_dir
from patience import patience

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "develop" / "adding-a-benchmark.md"
BLOCK = re.compile(r'^```(?P<lang>\w+) title="(?P<title>[^"]+)"\n(?P<body>.*?)^```$', re.M | re.S)
COPIED = ("src", "tests", "docs", "README.md", "mkdocs.yml", "pyproject.toml")
NAME = "toy2"
# A nested pytest in one process (the outer suite's workers already hold the cores; two more would each import the
# package again) that leaves no cache behind.
NESTED_PYTEST = ("-p", "no:cacheprovider", "-n0")
# Of the guide's checks, the other benchmarks' prompt cases cannot see the guide's benchmark (their snapshots are
# checked by the suite itself) and cost most of the run: only toy2's run here; every test that is not a prompt case
# (the contract, README, layer and snapshot-ownership checks over the whole registry and package) runs.
AFFECTED = ("-k", f"not test_prompt[ or {NAME}")
BEFORE = (  # the checks that must see the package before the rest of the checklist is done
    f"tests/benchmarks/test_contract.py::test_the_benchmark_declares_its_contract[{NAME}]",
    f"tests/benchmarks/test_contract.py::test_the_benchmark_has_tests_and_a_docs_page[{NAME}]",
    "tests/test_readme.py::test_the_benchmark_tables_and_citations_are_the_registrys",
    f"tests/prompts/test_prompt_snapshots.py::test_prompt[{NAME}-small-direct]",
    "tests/prompts/test_prompt_snapshots.py::test_every_snapshot_belongs_to_a_case",
)


def guide_blocks() -> dict[str, str]:
    """The guide's titled code blocks by title (a file's path, or ``commands``)."""
    return {m.group("title"): m.group("body") for m in BLOCK.finditer(GUIDE.read_text(encoding="utf-8"))}


def copy_repository(dest: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "*.egg-info", ".mypy_cache")
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=ignore)
        else:
            shutil.copy2(source, dest / name)
    return dest


def warm_mypy_cache(dest: Path) -> Path:
    """A copy of the checkout's ``.mypy_cache`` (warm in CI, whose ``mypy`` runs just before the suite) at ``dest``:
    mypy takes a cached module whose path differs (the copy's) when its source hashes the same, so only the guide's
    benchmark is checked afresh (about 10 CPU seconds instead of 60); a module that changed is checked again, and the
    checkout's own cache is never written. An empty directory where the checkout has none."""
    source = REPO / ".mypy_cache"
    if source.is_dir():
        shutil.copytree(source, dest)
    else:
        dest.mkdir(parents=True)
    return dest


def run(repo: Path, argv: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    """``argv`` as the guide writes it (``python``, ``pytest``, ``structbench``), run in the copy on its own code."""
    head = {"python": [sys.executable], "pytest": [sys.executable, "-m", "pytest", *NESTED_PYTEST],
            "structbench": [sys.executable, "-m", "structbench"]}[argv[0]]
    env = {k: v for k, v in os.environ.items() if k not in ("STRUCTBENCH_PLUGINS", "PYTEST_ADDOPTS")}
    others = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != REPO / "src"]
    env.update(PYTHONPATH=os.pathsep.join([str(repo / "src"), *others]),  # the copy's code, the same plugins
               STRUCTBENCH_SHARED_DATASETS=str(shared_datasets_dir()), STRUCTBENCH_CACHE=str(tmp / "cache"))
    return subprocess.run([*head, *argv[1:]], cwd=repo, env=env, capture_output=True, text=True, timeout=patience(600))


def outcomes(output: str) -> dict[str, str]:
    """``test id -> PASSED/FAILED/ERROR`` from the summary of ``pytest -rA``."""
    return {m.group(2): m.group(1) for m in re.finditer(r"^(PASSED|FAILED|ERROR) (\S+::\S+)", output, re.M)}


@pytest.mark.slow
def test_a_benchmark_added_by_the_guide_alone(tmp_path: Path) -> None:
    blocks = guide_blocks()
    commands = [shlex.split(line) for line in blocks.pop("commands").splitlines() if line.strip()]
    nav_line = blocks.pop("mkdocs.yml")
    package = f"src/structbench/benchmarks/{NAME}/__init__.py"
    assert {package, f"docs/benchmarks/{NAME}.md", f"tests/benchmarks/{NAME}/test_{NAME}.py"} == set(blocks)
    assert [c[0] for c in commands] == ["python", "pytest", "pytest"], commands
    repo = copy_repository(tmp_path / "repo")
    checks = [*commands[-1], "-rA"]  # every test's outcome in the summary

    # Item 1 and 2 only: the package. The registry sees it at once, and the other items' checks fail naming it.
    (repo / package).parent.mkdir(parents=True)
    (repo / package).write_text(blocks.pop(package))
    # The guide's code type-checks against the base class, under the repository's mypy settings.
    typed = run(repo, ["python", "-m", "mypy", "--cache-dir", str(warm_mypy_cache(tmp_path / "mypy")), package],
                tmp_path)
    assert typed.returncode == 0, typed.stdout[-3000:] + typed.stderr[-3000:]
    # The checks that must see it, by id (the guide's whole command again comes after the checklist).
    paths = [Path(arg) for arg in checks[1:] if not arg.startswith("-")]
    assert all(any(Path(test.split("::")[0]).is_relative_to(p) for p in paths) for test in BEFORE), checks
    before = run(repo, ["pytest", *BEFORE, "-q", "-rA"], tmp_path)
    assert before.returncode == 1, before.stdout[-3000:] + before.stderr[-3000:]
    seen = outcomes(before.stdout)
    assert seen[BEFORE[0]] == "PASSED"
    for failing in BEFORE[1:]:
        assert seen.get(failing) == "FAILED", (failing, before.stdout[-3000:])
    assert "run python -m structbench.tools.catalog" in before.stdout and f"docs/benchmarks/{NAME}.md" in before.stdout

    # The rest of the checklist: its tests and page, the nav line, then the guide's commands.
    for path, body in blocks.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(body)
    nav = (repo / "mkdocs.yml").read_text()
    last = list(re.finditer(r"^ +- .*: benchmarks/\w+\.md\n", nav, re.M))[-1]
    (repo / "mkdocs.yml").write_text(nav[: last.end()] + nav_line + nav[last.end():])
    for command in commands[:-1]:
        done = run(repo, command, tmp_path)
        assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
    after = run(repo, [*checks, *AFFECTED], tmp_path)
    assert after.returncode == 0, after.stdout[-5000:] + after.stderr[-3000:]
    seen = outcomes(after.stdout)
    passed = {test for test, outcome in seen.items() if outcome == "PASSED"}
    assert {*BEFORE, "tests/test_layers.py::test_every_module_is_in_a_layer_and_imports_none_above"} <= passed
    assert sum(f"benchmarks/{NAME}/test_{NAME}.py::" in test for test in seen) == 2
    assert f"| `{NAME}` | [Toy2](docs/benchmarks/{NAME}.md) |" in (repo / "README.md").read_text()

    # As a user runs it: the oracle scores every sample.
    out = tmp_path / "run"
    result = run(repo, ["structbench", "run", "-m", "oracle", "--bench", NAME, "--no-cache", "--out", str(out)],
                 tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (entry,) = json.loads((out / "metrics.json").read_text())["results"]
    assert entry["benchmark"] == NAME and entry["n"] == 20 and entry["metrics"]["accuracy"] == 1.0
    listed = run(repo, ["structbench", "list"], tmp_path)
    assert listed.returncode == 0 and f"{NAME}  Toy2" in listed.stdout
