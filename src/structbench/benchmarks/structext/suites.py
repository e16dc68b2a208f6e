"""The generated suites: Test (depth 1-2, width 1, 64 per task) and Test-Hard (depth 1-3 x width 1-3, 8 each).

A suite is a list of cells ``(depth, width, n)``; for each cell and language, ``n`` structures are
drawn and every template of the language asks one question about each, so each template gets ``n``
questions per cell (29 x 2 x 64 = 3,712 and 29 x 9 x 8 = 2,088, the paper's Table 2 counts).
Syntax questions alternate broken / intact texts (balanced); ``syntax="official"`` breaks all of them,
as the release does.

Order: structure index first, then cell, then template slot, then language. The first 8 questions
are one per language, the first 29 one per template, and every block of 29 x cells questions covers
all templates at every size, so ``--limit N`` draws a spread sample; a prefix is always the same
whatever the limit. Ids (``<template>/d<depth>w<width>/<index>``) name the same question in any order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import chain, islice, zip_longest
from typing import Literal, NamedTuple

from structbench.benchmarks.structext.generator import QA, Shape, generate
from structbench.benchmarks.structext.generator.topology import topology
from structbench.benchmarks.structext.templates import LANGUAGES, TEMPLATES
from structbench.core.forkmap import cpu_count, fork_map

SyntaxMode = Literal["balanced", "official"]


@dataclass(frozen=True)
class Cell:
    """One complexity setting of a suite and how many structures per language it gets."""

    depth: int
    width: int
    n: int


SUITES: dict[str, tuple[Cell, ...]] = {
    "test": (Cell(1, 1, 64), Cell(2, 1, 64)),
    "hard": tuple(Cell(d, w, 8) for d in (1, 2, 3) for w in (1, 2, 3)),
}


class Item(NamedTuple):
    """One generated question, ready to become a ``Sample``."""

    id: str
    template: str
    question: str
    answer: str
    reference: str
    depth: int
    width: int
    seed: str
    """The structure's seed: regenerates it (few-shot demonstrations draw from neighbouring seeds)."""


def structure_seed(seed: int, language: str, depth: int, width: int, index: int) -> str:
    """A process-independent seed for one structure (``random.Random`` hashes strings with SHA-512)."""
    return f"structext/{seed}/{language}/d{depth}w{width}/{index}"


def syntax_broken(index: int, mode: SyntaxMode) -> bool:
    """Whether the ``index``-th structure's Syntax question reads a broken text."""
    return mode == "official" or index % 2 == 0


def _question(qa: QA) -> str:
    return TEMPLATES[qa.template].question(**qa.slots) if qa.slots else _fixed_question(qa.template)


@cache
def _fixed_question(template: str) -> str:
    return TEMPLATES[template].question()


Row = tuple[str, str, str, str, str, int, int, str]
"""An ``Item``'s fields as a plain tuple (what worker processes send back: it pickles twice as fast)."""


def _block(cell: Cell, index: int, seed: int, syntax: SyntaxMode, verify: bool) -> list[Row]:
    """The questions about every language's ``index``-th structure of ``cell``, slot by slot, then language."""
    depth, width = cell.depth, cell.width
    shape = Shape(depth, width)
    broken = syntax_broken(index, syntax)
    suffix = f"/d{depth}w{width}/{index:03d}"
    columns = []
    for language in LANGUAGES:
        key = structure_seed(seed, language, depth, width, index)
        qas = generate(language, shape, key, syntax_error=broken, verify=verify)
        columns.append([(qa.template + suffix, qa.template, _question(qa), qa.answer, qa.reference, depth, width, key)
                        for qa in qas])
    return [row for rows in zip_longest(*columns) for row in rows if row is not None]


def _blocks(suite: str) -> list[tuple[Cell, int]]:
    """The suite's ``(cell, structure index)`` blocks in question order."""
    cells = SUITES[suite]
    return [(cell, index) for index in range(max(cell.n for cell in cells)) for cell in cells if index < cell.n]


CHILD_OVERHEAD = 0.08
"""What a forked share costs beyond its own work, as a fraction of it: pickling its questions there and
reading them back here, both after its work is done (measured: about 4 ms on 45 ms for Test)."""


def _shares(blocks: list[tuple[Cell, int]], n: int, syntax: SyntaxMode) -> list[list[int]]:
    """``n`` lists of block positions that finish together (largest first, each to the earliest finisher).

    A block's work grows with its node count, plus a fixed part per structure; a broken Syntax text
    is one more text to write and parse. Share 0 runs in this process, the others in forked children,
    whose results still have to travel (``CHILD_OVERHEAD``).
    """
    cost = [(topology(Shape(cell.depth, cell.width).branching, cell.depth).total + 8)
            * (5 if syntax_broken(index, syntax) else 4) for cell, index in blocks]
    rate = [1.0] + [1.0 + CHILD_OVERHEAD] * (n - 1)
    shares: list[list[int]] = [[] for _ in range(n)]
    load = [0] * n
    for pos in sorted(range(len(blocks)), key=cost.__getitem__, reverse=True):
        first = min(range(n), key=lambda k: (load[k] + cost[pos]) * rate[k])
        shares[first].append(pos)
        load[first] += cost[pos]
    return shares


PARALLEL_BLOCKS = 16
"""Below this many blocks a suite is made in this process: forking would cost more than it saves."""


def suite_items(suite: str, seed: int = 0, *, syntax: SyntaxMode = "balanced", verify: bool = True,
                limit: int | None = None, workers: int | None = None) -> list[Item]:
    """All questions of a suite, interleaved (see the module docstring); ``limit`` stops early.

    The blocks are shared among ``workers`` processes (default: one per CPU; see ``forkmap``); the
    questions and their order do not depend on it.
    """
    blocks = _blocks(suite)
    if limit is not None:
        blocks = blocks[: -(-limit // len(TEMPLATES))]  # every block asks all 29 templates
    n = min(workers or cpu_count(), len(blocks)) if len(blocks) >= PARALLEL_BLOCKS else 1

    def make(share: list[int]) -> list[list[Row]]:
        return [_block(*blocks[pos], seed, syntax, verify) for pos in share]

    shares = _shares(blocks, n, syntax)
    made: list[list[Row]] = [[] for _ in blocks]
    for share, lists in zip(shares, fork_map(make, shares), strict=True):
        for pos, rows in zip(share, lists, strict=True):
            made[pos] = rows
    out = list(map(Item._make, chain.from_iterable(made)))
    return out if limit is None else out[:limit]


def suite_size(suite: str, limit: int | None = None) -> int:
    """How many questions ``suite_items`` makes (at most ``limit``): every block asks all the templates."""
    total = len(_blocks(suite)) * len(TEMPLATES)
    return total if limit is None else min(total, limit)


def iter_suite_items(suite: str, seed: int = 0, *, syntax: SyntaxMode = "balanced", verify: bool = True,
                     limit: int | None = None) -> Iterator[Item]:
    """``suite_items``' questions in the same order, made a block at a time (in this process) as they are read: a
    run's first request waits for the first block only, and the rest are made while the model answers."""
    blocks = _blocks(suite)
    if limit is not None:
        blocks = blocks[: -(-limit // len(TEMPLATES))]
    rows = chain.from_iterable(_block(cell, index, seed, syntax, verify) for cell, index in blocks)
    return islice(map(Item._make, rows), limit)


def demonstrations(template: str, depth: int, width: int, seed: str, k: int, *,
                   syntax: SyntaxMode = "balanced") -> list[QA]:
    """``k`` worked examples of ``template`` at the given size, from structures seeded after ``seed``."""
    language = TEMPLATES[template].language
    shape = Shape(depth, width)
    demos = []
    for j in range(k):
        qas = generate(language, shape, f"{seed}/demo{j}", syntax_error=syntax_broken(j + 1, syntax))
        demos.append(next(qa for qa in qas if qa.template == template))
    return demos
