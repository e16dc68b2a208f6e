"""Documents as constant text with holes, filled in one C-level gather (the generator's fast path).

A language's layout is written once as a readable emitter that yields constant text and slots
(``("id", i)``: node ``i``'s name, ``("attrs", i)``: its attribute block, ``("word", i)``: its filler
word). ``skeleton`` runs it once per tree shape and keeps the constant pieces and the order in which
the holes are read; ``Skeleton.fill`` then writes a document of that shape with one
``operator.itemgetter`` call and one ``str.join``, however many nodes it has. Attribute blocks are made
the same way: ``Fragments`` keeps each attribute key and value already wrapped in the language's
punctuation, so an attribute line is one string concatenation done by ``map``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from structbench.benchmarks.structext.generator.naming import NameTable
from structbench.benchmarks.structext.generator.topology import Topology

Slot = tuple[str, int]
Emitter = Callable[[Topology, int], Iterator[str | Slot]]
"""``(topology, node) -> pieces`` of that node's subtree: constant text and slots."""


@dataclass(frozen=True, slots=True)
class Skeleton:
    """A document shape: constant text and the order of its holes."""

    consts: list[str]
    kinds: tuple[str, ...]
    """The slot kinds, in the order their columns follow ``consts`` in the source list."""
    gather: Callable[[list[str]], Any]
    """``itemgetter`` over ``consts + column(kinds[0]) + column(kinds[1]) ...``: the pieces in text order."""

    def fill(self, columns: dict[str, list[str]]) -> str:
        """The document, with column ``k``'s item ``i`` in slot ``(k, i)``."""
        source = self.consts.copy()
        for kind in self.kinds:
            source += columns[kind]
        return "".join(self.gather(source))


def skeleton(emit: Emitter, topo: Topology, kinds: tuple[str, ...], copies: int = 1, sep: str = "\n\n") -> Skeleton:
    """The skeleton of ``copies`` trees of shape ``topo`` joined by ``sep`` (columns hold copy after copy)."""
    n = topo.total
    consts: list[str] = []
    order: list[Slot] = []
    text: list[str] = []

    def flush() -> None:
        consts.append("".join(text))
        text.clear()

    for copy in range(copies):
        if copy:
            text.append(sep)
        for piece in emit(topo, 0):
            if isinstance(piece, str):
                text.append(piece)
            else:
                flush()
                order.append((piece[0], piece[1] + copy * n))
    flush()
    base = {kind: len(consts) + k * n * copies for k, kind in enumerate(kinds)}
    indices: list[int] = []
    for i, (kind, node) in enumerate(order):
        if consts[i]:
            indices.append(i)
        indices.append(base[kind] + node)
    if consts[-1]:
        indices.append(len(consts) - 1)
    if len(indices) < 2:  # itemgetter of one index returns the item, not a tuple
        indices.append(len(consts) - 1)
    return Skeleton(consts, kinds, itemgetter(*indices))


class Fragments:
    """A language's wrapping of a ``NameTable``'s names (e.g. ``"K":"`` for JSON keys), grown on demand."""

    def __init__(self, names: NameTable, wrap: Callable[[str], str]) -> None:
        self.names = names
        self.wrap = wrap
        self.items: list[str] = []

    def upto(self, n: int) -> list[str]:
        """The list, grown to at least ``n`` items (the same list object every time)."""
        if len(self.items) < n:
            names = self.names.upto(n)
            self.items += map(self.wrap, names[len(self.items) : len(names)])
        return self.items
