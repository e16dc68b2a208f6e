"""Move structbench's root modules into folders that carry the layers (issue 39, item 3), and rewrite every reference.

Run from the repository root on a clean tree: ``python tools/dev/move_layers.py`` (``--dry-run`` lists what it would
do). It is idempotent: a second run, or a run on a main that already holds the move, changes nothing; a run on a main
that gained new files or imports since rewrites those too. Steps:

1. ``git mv`` each module of ``MOVES`` to its folder (creating the folder's ``__init__.py`` from ``PACKAGES``);
2. rewrite every dotted name and file path of a moved module in the tracked text files (imports, ``mock.patch`` and
   ``importlib`` strings, lazy ``"module:attr"`` targets, entry points, mkdocs ``::: structbench.x``, prose), and
   ``from structbench import csvdb`` into ``from structbench.data import csvdb``;
3. write the re-export modules of ``SHIMS``: the paths the docs promise plugin authors stay importable.

``testing/architecture.py``'s ``LAYERS``, ``tests/test_layers.py`` and the docs' prose about the layers are edited
by hand in their own commit; this script only moves and renames.
"""

# ruff: noqa: E501  (FIXUPS holds whole lines as they read in the files)

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

PKG = Path("src/structbench")

MOVES: dict[str, str] = {
    # core: what every layer may use
    "errors": "core.errors",
    "atomic": "core.atomic",
    "redact": "core.redact",
    "registry": "core.registry",
    "plugins": "core.plugins",
    "yaml_input": "core.yaml_input",
    "forkmap": "core.forkmap",
    "trusted": "core.trusted",
    "untrusted": "core.untrusted",
    "version": "core.version",
    # statistics
    "confusion": "stats.confusion",
    # data
    "datasets": "data.datasets",
    "csvdb": "data.csvdb",
    # models
    "tokens": "backends.tokens",
    "usage": "backends.usage",
    "prices": "backends.prices",
    # the contract between the core and a benchmark
    "benchmark": "contract.benchmark",
    "provenance": "contract.provenance",
    # the run files
    "runformat": "runfiles.runformat",
    "manifest": "runfiles.manifest",
    "runconfig": "runfiles.runconfig",
    "records": "runfiles.records",
    "results": "runfiles.results",
    "outcomes": "runfiles.outcomes",
    "cells": "runfiles.cells",
    "heartbeat": "runfiles.heartbeat",
    "rundir": "runfiles.rundir",
    "recordlines": "runfiles.recordlines",
    "interop.inspect_schema": "runfiles.inspect_schema",
    # analysis over records
    "paired": "analysis.paired",
    "robustness": "analysis.robustness",
    "record_metrics": "analysis.record_metrics",
    # the papers' presets need the benchmarks' registry: they live with it
    "papers.registry": "benchmarks.presets",
    # batch APIs are part of a run (they drive the runner's calls and steps)
    "batch": "runner.batch",
    # entry points
    "catalog": "tools.catalog",
}
"""Old dotted name (under ``structbench``) -> new one; a module or a package."""

PACKAGES: dict[str, str] = {
    "core": "The foundation every layer may import: errors and exit codes, atomic files, secrets' redaction,\n"
    "registries and plugins, user YAML read safely, untrusted names checked, forked work, the version.\n"
    "It imports nothing else of structbench.",
    "contract": "What the core and a benchmark agree on: the ``Benchmark`` and ``Strategy`` interfaces\n"
    "(``contract.benchmark``) and where a benchmark's data comes from (``contract.provenance``). Plugin\n"
    "authors may import both from the package root too (its ``benchmark`` and ``provenance`` re-exports).",
    "runfiles": "The run files: a run's configuration, ``manifest.json``, ``samples.jsonl``'s records,\n"
    "``metrics.json``'s results and scored outcomes, a sweep's cells, ``progress.json``, the format's version,\n"
    "Inspect logs' layout, and the one reader of a run directory (``rundir``). The runner writes them;\n"
    "report, interop, view and the API read them through this package.",
    "analysis": "Analysis over records: paired tests between systems and a sweep's robustness, shared by\n"
    "``metrics.json`` and the report.",
}
"""New folder -> the docstring of its ``__init__.py``."""

SHIMS: dict[str, str] = {
    "errors": "core.errors",
    "benchmark": "contract.benchmark",
    "provenance": "contract.provenance",
    "datasets": "data.datasets",
    "csvdb": "data.csvdb",
    "tokens": "backends.tokens",
}
"""Old path the docs promise plugin authors -> the module it re-exports."""

SHIM_MARK = "# re-export written by tools/dev/move_layers.py"

HAND_EDITED = {"tests/test_layers.py", "src/structbench/testing/architecture.py"}
"""Files that name the old paths on purpose (the layer tests' throwaway packages, the re-exports' list)."""

TEXT_SUFFIXES = {".py", ".md", ".yml", ".yaml", ".toml", ".txt", ".cfg", ".ini", ".html", ".j2", ".jinja", ".sh", ""}


def module_path(dotted: str) -> Path:
    """The file or folder of ``structbench.<dotted>`` (a package when that folder exists)."""
    base = PKG.joinpath(*dotted.split("."))
    return base if base.is_dir() else base.with_suffix(".py")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def shim_text(old: str, new: str) -> str:
    return (
        f'"""``structbench.{old}``, a path the docs promise plugin authors: everything of\n'
        f'``structbench.{new}``."""\n\n{SHIM_MARK}\nfrom structbench.{new} import *  # noqa: F403\n'
    )


def is_shim(path: Path) -> bool:
    return path.is_file() and SHIM_MARK in path.read_text(encoding="utf-8")


def move(dry_run: bool) -> None:
    for old, new in MOVES.items():
        src = PKG.joinpath(*old.split("."))
        src = src if src.is_dir() else src.with_suffix(".py")
        dst = PKG.joinpath(*new.split("."))
        dst = dst if src.is_dir() else dst.with_suffix(".py")
        if not src.exists() or is_shim(src):
            continue
        if dst.exists():
            sys.exit(f"both {src} and {dst} exist: merge them by hand, then run again")
        folder = dst.parent
        if not (folder / "__init__.py").exists():
            name = folder.relative_to(PKG).as_posix()
            doc = PACKAGES.get(name)
            if doc is None:
                sys.exit(f"{folder} is not a package and PACKAGES has no docstring for it")
            print(f"create {folder}/__init__.py")
            if not dry_run:
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "__init__.py").write_text(f'"""{doc}"""\n', encoding="utf-8")
                git("add", str(folder / "__init__.py"))
        print(f"git mv {src} {dst}")
        if not dry_run:
            git("mv", str(src), str(dst))


def patterns() -> list[tuple[re.Pattern[str], str]]:
    """Dotted names and file paths, longest old name first so ``papers.registry`` goes before a shorter match."""
    subs: list[tuple[re.Pattern[str], str]] = []
    for old in sorted(MOVES, key=len, reverse=True):
        new = MOVES[old]
        subs.append((re.compile(rf"(?<![\w.])structbench\.{re.escape(old)}(?!\w)"), f"structbench.{new}"))
        old_path, new_path = old.replace(".", "/"), new.replace(".", "/")
        path_pattern = re.compile(rf"(?<![\w.])structbench/{re.escape(old_path)}(?=\.py\b|/)")
        subs.append((path_pattern, f"structbench/{new_path}"))
    return subs


FROM_IMPORT = re.compile(
    r"^(?P<indent>[ \t]*)from structbench(?P<pkg>(?:\.\w+)*) import (?P<names>[\w ,]+?)(?P<tail>[ \t]*(?:#.*)?)$",
    re.MULTILINE,
)


def rewrite_from_imports(text: str) -> str:
    """``from structbench[.pkg] import a, b`` naming a moved module: from its new package (one line per package)."""

    def sub(m: re.Match[str]) -> str:
        pkg = m["pkg"].lstrip(".")
        names = [n.strip() for n in m["names"].split(",") if n.strip()]
        groups: dict[str, list[str]] = {}
        changed = False
        for name in names:
            bare = name.split(" as ")[0].strip()
            old = f"{pkg}.{bare}" if pkg else bare
            new = MOVES.get(old)
            if new is None:
                groups.setdefault(pkg, []).append(name)
                continue
            changed = True
            new_pkg, _, new_name = new.rpartition(".")
            alias = name.split(" as ")[1].strip() if " as " in name else None
            if alias is None and new_name != bare:
                alias = bare
            groups.setdefault(new_pkg, []).append(f"{new_name} as {alias}" if alias and alias != new_name else new_name)
        if not changed:
            return m[0]
        lines = []
        for i, (group_pkg, group) in enumerate(groups.items()):
            dotted = f"structbench.{group_pkg}" if group_pkg else "structbench"
            lines.append(f"{m['indent']}from {dotted} import {', '.join(group)}{m['tail'] if i == 0 else ''}")
        return "\n".join(lines)

    return FROM_IMPORT.sub(sub, text)


def rewrite(dry_run: bool) -> None:
    subs = patterns()
    me = Path(__file__).resolve()
    for name in git("ls-files").splitlines():
        path = Path(name)
        if path.suffix not in TEXT_SUFFIXES or not path.is_file() or path.resolve() == me or is_shim(path):
            continue
        if name in HAND_EDITED:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if "structbench" not in text:
            continue
        new = rewrite_from_imports(text) if path.suffix == ".py" else text
        for pattern, repl in subs:
            new = pattern.sub(repl, new)
        if new != text:
            print(f"rewrite {path}")
            if not dry_run:
                path.write_text(new, encoding="utf-8")


def write_shims(dry_run: bool) -> None:
    for old, new in SHIMS.items():
        path = PKG / f"{old.replace('.', '/')}.py"
        text = shim_text(old, new)
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        if path.exists() and not is_shim(path) and not dry_run:
            sys.exit(f"{path} exists and is not a re-export: run the moves first")
        print(f"write {path}")
        if not dry_run:
            path.write_text(text, encoding="utf-8")
            git("add", str(path))


FIXUPS: list[tuple[str, str, str]] = [
    (
        'benchmarks/intervals.py',
        'as a run holds them (``structbench.runfiles.outcomes.Outcomes``: numpy columns)\nand adds the whole result entry a run computes at its end (``results.compute_result``: metrics, every breakdown,\n',
        'as a run holds them\n(``structbench.runfiles.outcomes.Outcomes``: numpy columns) and adds the whole result entry a run computes at\nits end (``results.compute_result``: metrics, every breakdown,\n',
    ),
    (
        'src/structbench/analysis/paired.py',
        "In the contract layer so that what writes ``metrics.json`` (a sweep's robustness, ``structbench.analysis.robustness``) and\n"
        "what reads it (``compare``, the leaderboard's tests) test the same way with the same ``StatsOptions``.",
        "Below the runner and the report, so that what writes ``metrics.json`` (a sweep's robustness,\n"
        "``structbench.analysis.robustness``) and what reads it (``compare``, the leaderboard's tests) test the same way\n"
        "with the same ``StatsOptions``.",
    ),
    (
        'src/structbench/backends/litellm.py',
        '    them), as ``structbench.backends.prices.Prices`` for ``litellm:MODEL``; None when its list does not price the model.',
        '    them), as ``structbench.backends.prices.Prices`` for ``litellm:MODEL``; None when its list does not price the\n    model.',
    ),
    (
        'src/structbench/benchmarks/skabench/benchmark.py',
        '    """Token counter for budgets, a ``structbench.backends.tokens`` spec: cl100k, cl100k-approx, llamacpp[:PATH], hf:MODEL ..."""',
        '    """Token counter for budgets, a ``structbench.backends.tokens`` spec: cl100k, cl100k-approx, llamacpp[:PATH],\n    hf:MODEL ..."""',
    ),
    (
        'src/structbench/interop/__init__.py',
        '``structbench.runfiles.rundir``: records as columns, each full record read back as it is written out)',
        '``structbench.runfiles.rundir``: records as columns, each full record read back as it is written\nout)',
    ),
    (
        'src/structbench/interop/rundir.py',
        "current record of every sample, read by the run-files layer's one reader (``structbench.runfiles.rundir``): records as columns,\n",
        "current record of every sample, read by the run-files layer's one reader (``structbench.runfiles.rundir``):\nrecords as columns,\n",
    ),
    (
        'src/structbench/papers/robustness.py',
        'in one run (``structbench.analysis.robustness``). The grid',
        'in one run\n(``structbench.analysis.robustness``). The grid',
    ),
    (
        'src/structbench/report/__init__.py',
        '``structbench.runfiles.rundir``), ``entries`` (results joined with records and intervals), ``tables`` and ``plots`` (content),',
        '``structbench.runfiles.rundir``), ``entries`` (results joined with records and intervals), ``tables`` and ``plots``\n(content),',
    ),
    (
        'src/structbench/runner/export.py',
        '    ``structbench.runfiles.outcomes``); a check that fails is raised after the last sample, before anything is returned.',
        '    ``structbench.runfiles.outcomes``); a check that fails is raised after the last sample, before anything is\n    returned.',
    ),
    (
        'src/structbench/runner/sweep.py',
        "The cells' names are the contract's (``structbench.runfiles.cells``); the reference cell",
        "The cells' names are the run files'\n(``structbench.runfiles.cells``); the reference cell",
    ),
    (
        'src/structbench/stats/metric.py',
        '    """Outcomes held as columns (``structbench.runfiles.outcomes.Outcomes``): an interval reads their ids, clusters, epochs and\n',
        '    """Outcomes held as columns (``structbench.runfiles.outcomes.Outcomes``): an interval reads their ids, clusters,\n    epochs and\n',
    ),
    (
        'tests/benchmarks/test_contract.py',
        '        f"{name}: set provenance (structbench.contract.provenance.Provenance: the paper, its data and license; the README\'s "\n',
        '        f"{name}: set provenance (structbench.contract.provenance.Provenance: the paper, its data and license; "\n        "the README\'s "\n',
    ),
    (
        'tests/test_layers.py',
        '    """Benchmarks reach models and tokenizers through the core (``benchmark.other_model``, ``structbench.backends.tokens``)."""',
        '    """Benchmarks reach models and tokenizers through the core (``benchmark.other_model``,\n    ``structbench.backends.tokens``)."""',
    ),
]
"""(file, text after the rewrite, text to put instead): lines the longer names pushed past ruff's 120 columns."""


def fix_up(dry_run: bool) -> None:
    for name, before, after in FIXUPS:
        path = Path(name)
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        if before in text:
            print(f"wrap {path}")
            if not dry_run:
                path.write_text(text.replace(before, after), encoding="utf-8")


def sort_imports(dry_run: bool) -> None:
    """Imports sorted again under their new names (ruff's isort, the project's configuration)."""
    if not dry_run:
        subprocess.run([sys.executable, "-m", "ruff", "check", "--quiet", "--select", "I001", "--fix",
                        "src", "tests", "benchmarks"], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="list what would change, change nothing")
    args = parser.parse_args()
    if not PKG.is_dir():
        sys.exit("run from the repository root")
    move(args.dry_run)
    rewrite(args.dry_run)
    fix_up(args.dry_run)
    write_shims(args.dry_run)
    sort_imports(args.dry_run)


if __name__ == "__main__":
    main()
