"""The shape of a full tree, computed once per (branching, depth) and shared by every language.

Every generated structure is a full ``branching``-ary tree of ``depth`` levels below the root, so
everything that depends only on its shape (pre-order levels, subtree sizes, index paths, leaves,
line numbers of fixed-size layouts) is computed here once and reused by every document of that shape;
only the random parts (attribute counts, names) are drawn per document.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True, slots=True)
class Topology:
    """A full tree's nodes in pre-order (document order)."""

    branching: int
    depth: int
    levels: tuple[int, ...]
    sizes: tuple[int, ...]
    """Nodes in each node's subtree (itself included): its subtree is ``range(i, i + sizes[i])``."""
    parents: tuple[int, ...]
    """Each node's parent (-1 for the root)."""
    paths: tuple[tuple[int, ...], ...]
    """Child positions from the root down to each node."""
    is_leaf: tuple[bool, ...]

    @property
    def total(self) -> int:
        return len(self.levels)

    @property
    def leaves(self) -> list[int]:
        return [i for i, leaf in enumerate(self.is_leaf) if leaf]

    def lineage(self, node: int) -> list[int]:
        """The nodes from the root down to ``node``."""
        out = [node]
        while self.parents[out[-1]] >= 0:
            out.append(self.parents[out[-1]])
        return out[::-1]


@cache
def topology(branching: int, depth: int) -> Topology:
    """The full ``branching``-ary tree of ``depth`` levels below the root (``depth`` 0: one node)."""
    levels: list[int] = []
    sizes: list[int] = []
    parents: list[int] = []
    paths: list[tuple[int, ...]] = []

    def grow(level: int, path: tuple[int, ...], parent: int) -> None:
        i = len(levels)
        levels.append(level)
        sizes.append(0)
        parents.append(parent)
        paths.append(path)
        if level < depth:
            for j in range(branching):
                grow(level + 1, (*path, j), i)
        sizes[i] = len(levels) - i

    grow(0, (), -1)
    return Topology(branching, depth, tuple(levels), tuple(sizes), tuple(parents), tuple(paths),
                    tuple(s == 1 for s in sizes))
