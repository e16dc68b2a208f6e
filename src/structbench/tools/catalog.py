"""The README's and the docs' tables of benchmarks, generated from the registry and the benchmarks' attributes.

A generated block sits between ``<!-- begin: NAME -->`` and ``<!-- end: NAME -->`` in a Markdown file. After
adding a benchmark (or changing its ``title``, ``summary``, ``paper`` or ``headline_label``), rewrite them::

    python -m structbench.tools.catalog            # README.md, docs/index.md, docs/benchmarks/index.md, in place
    python -m structbench.tools.catalog --check    # exit 1 naming each stale block (tests/test_readme.py does this)
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from structbench.benchmarks import BENCHMARKS, BUILTIN
from structbench.contract.benchmark import Benchmark

BLOCK = re.compile(r"(<!-- begin: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end: (?P=name) -->)", re.S)


def builtin_benchmarks() -> list[type[Benchmark]]:
    """The package's own benchmarks, in registry order."""
    return [BENCHMARKS.get(name) for name in BUILTIN]


def benchmark_table(page: Callable[[str], str]) -> str:
    """The benchmark table: ``--bench``, the paper (linked to ``page(name)``), what a sample asks, the headline."""
    rows = ["| `--bench` | paper | what | headline |", "|---|---|---|---|"]
    for cls in builtin_benchmarks():
        label = cls.headline_label or cls.headline
        rows.append(f"| `{cls.name}` | [{cls.title}]({page(cls.name)}) | {cls.summary} | {label} |")
    return "\n".join(rows) + "\n"


def citations() -> str:
    """The README's "Citing" list: one line per benchmark, its paper as its ``provenance`` gives it."""
    return "".join(f"- **{cls.title}**: {cls.provenance.paper if cls.provenance else '-'}\n"
                   for cls in builtin_benchmarks())


def _page_link(root: Path, file: Path) -> Callable[[str], str]:
    """A benchmark's docs page, relative to ``file``."""
    return lambda name: Path(os.path.relpath(root / "docs" / "benchmarks" / f"{name}.md", file.parent)).as_posix()


BLOCKS: dict[str, Callable[[Path, Path], str]] = {
    "benchmarks": lambda root, file: benchmark_table(_page_link(root, file)),
    "citations": lambda root, file: citations(),
}
"""Generated blocks by name, rendered for ``(repository root, the file they sit in)``."""

FILES = ("README.md", "docs/index.md", "docs/benchmarks/index.md")
"""The files holding generated blocks, relative to the repository root."""


def refresh(root: Path, file: Path, text: str) -> str:
    """``text`` (the contents of ``file``) with every generated block rendered anew."""

    def render(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in BLOCKS:
            raise ValueError(f"{file}: unknown generated block {name!r} (known: {', '.join(BLOCKS)})")
        return match.group(1) + BLOCKS[name](root, file) + match.group(4)

    return BLOCK.sub(render, text)


def stale(root: Path) -> list[str]:
    """``FILE: block NAME`` for every block of ``FILES`` under ``root`` that differs from what the registry gives."""
    out = []
    for rel in FILES:
        file = root / rel
        text = file.read_text(encoding="utf-8")
        names = [m.group("name") for m in BLOCK.finditer(text)]
        if not names:
            out.append(f"{rel}: no generated block (<!-- begin: NAME --> ... <!-- end: NAME -->)")
        fresh = {m.group("name"): m.group("body") for m in BLOCK.finditer(refresh(root, file, text))}
        out += [f"{rel}: block {m['name']}" for m in BLOCK.finditer(text) if fresh[m["name"]] != m["body"]]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m structbench.tools.catalog", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the repository root (default: here)")
    parser.add_argument("--check", action="store_true", help="only say which blocks are stale (exit 1 if any)")
    args = parser.parse_args(argv)
    if args.check:
        problems = stale(args.root)
        for problem in problems:
            print(f"stale: {problem}; run python -m structbench.tools.catalog", file=sys.stderr)
        return 1 if problems else 0
    for rel in FILES:
        file = args.root / rel
        text = file.read_text(encoding="utf-8")
        new = refresh(args.root, file, text)
        if new != text:
            file.write_text(new, encoding="utf-8")
            print(f"rewrote {rel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
