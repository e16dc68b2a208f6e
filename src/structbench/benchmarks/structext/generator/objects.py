"""Object notations (JSON, YAML, XML): one abstract tree of objects, written out in the release's layouts.

Layouts follow the released files: JSON puts an object's members at the brace's indentation and its
``subs`` items one space deeper; YAML writes ``key: value`` lines and ``- id:`` items two spaces deeper
(without the release's trailing ``,`` after each value, which YAML would read as part of the value);
XML nests tags one space deeper, attributes in key order, the node's word after its children.
Excerpt answers are an object's own lines (for XML: the lines between its tags) with the object's
indentation removed, as the release's answers are: that is the object's subtree written as a root.

Each layout is a readable emitter (``_json``, ``_yaml``, ``_xml``) turned into a cached skeleton per
tree shape (``layout.py``); a document is then filled in with a few C-level calls, whatever its size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from itertools import accumulate, compress, repeat
from random import Random

from structbench.benchmarks.structext.generator.common import QA, WORDS, Shape
from structbench.benchmarks.structext.generator.layout import Emitter, Fragments, Skeleton, Slot, skeleton
from structbench.benchmarks.structext.generator.naming import DOWN, DOWN_UPPER, UP, UP_UPPER
from structbench.benchmarks.structext.generator.topology import Topology, topology

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'

# --- layouts ------------------------------------------------------------------------------------------


def _children(topo: Topology, i: int) -> Iterator[int]:
    child = i + 1
    for _ in range(topo.branching if not topo.is_leaf[i] else 0):
        yield child
        child += topo.sizes[child]


def _json(topo: Topology, i: int) -> Iterator[str | Slot]:
    """``{`` / ``"id":"X",`` / ``"K":"v",`` lines / ``"subs":[`` children ``]`` / ``}``, all at the brace's indent."""
    ind = " " * topo.levels[i]
    yield ind + "{\n" + ind + '"id":"'
    yield ("id", i)
    yield '",\n' + ind
    yield ("attrs", i)
    if topo.is_leaf[i]:
        yield "\n" + ind + '"subs":[]\n' + ind + "}"
        return
    yield "\n" + ind + '"subs":[\n'
    children = list(_children(topo, i))
    for k, child in enumerate(children):
        yield from _json(topo, child)
        yield ",\n" if k < len(children) - 1 else "\n"
    yield ind + "]\n" + ind + "}"


def _yaml(topo: Topology, i: int) -> Iterator[str | Slot]:
    """``- id: "X"`` / ``K: v`` lines / ``subs:`` with the items two spaces deeper (``subs: []`` for a leaf)."""
    level = topo.levels[i]
    ind = "  " * level
    yield ("  " * (level - 1) + "- " if level else "") + 'id: "'
    yield ("id", i)
    yield '"\n' + ind
    yield ("attrs", i)
    if topo.is_leaf[i]:
        yield "\n" + ind + "subs: []"
        return
    yield "\n" + ind + "subs: "
    for child in _children(topo, i):
        yield "\n"
        yield from _yaml(topo, child)


def _xml(topo: Topology, i: int) -> Iterator[str | Slot]:
    """``<X K="v" ...>`` / children one space deeper / `` word`` / ``</X>``."""
    ind = " " * topo.levels[i]
    yield ind + "<"
    yield ("id", i)
    yield " "
    yield ("attrs", i)
    yield ">"
    for child in _children(topo, i):
        yield "\n"
        yield from _xml(topo, child)
    yield "\n" + ind + " "
    yield ("word", i)
    yield "\n" + ind + "</"
    yield ("id", i)
    yield ">"


END = "\x00"
"""Marks the end of a node's attributes in the stream of all attributes (names never hold it)."""


@dataclass(frozen=True)
class Notation:
    """How one language writes the object tree: layout, attribute punctuation, attribute separator."""

    name: str
    emit: Emitter
    kinds: tuple[str, ...]
    key: Callable[[str], str]
    """An attribute key with its punctuation (``"K":"`` in JSON)."""
    value: Callable[[str], str]
    """An attribute value with its punctuation (``v",`` in JSON)."""
    indent: str
    """One level of indentation of attribute lines (empty: attributes share one line, space-separated)."""

    def sep(self, level: int) -> str:
        return "\n" + self.indent * level if self.indent else " "

    @cached_property
    def keys(self) -> Fragments:
        """Keys with their punctuation, aligned with ``DOWN_UPPER``."""
        return Fragments(DOWN_UPPER, self.key)

    @cached_property
    def values(self) -> Fragments:
        """Values with their punctuation and the separator to the next attribute, aligned with ``DOWN``."""
        return Fragments(DOWN, lambda v: self.value(v) + self.sep(0))

    @cached_property
    def last_values(self) -> Fragments:
        """Values with their punctuation, as a node's last attribute (followed by ``END``)."""
        return Fragments(DOWN, lambda v: self.value(v) + END)


NOTATIONS: dict[str, Notation] = {
    "json": Notation("json", _json, ("id", "attrs"), lambda k: f'"{k}":"', lambda v: f'{v}",', " "),
    "yaml": Notation("yaml", _yaml, ("id", "attrs"), lambda k: f"{k}: ", lambda v: v, "  "),
    "xml": Notation("xml", _xml, ("id", "attrs", "word"), lambda k: f'{k}="', lambda v: f'{v}"', ""),
}


@cache
def _skeleton(lang: str, branching: int, depth: int, copies: int = 1) -> Skeleton:
    notation = NOTATIONS[lang]
    return skeleton(notation.emit, topology(branching, depth), notation.kinds, copies)


@cache
def _seps(lang: str, branching: int, depth: int) -> list[str]:
    """The attribute separator of every node of a shape, in pre-order."""
    return [NOTATIONS[lang].sep(level) for level in topology(branching, depth).levels]


@cache
def _words(branching: int, depth: int) -> list[str]:
    """XML's filler word of every node (``WORDS[i % 26]`` by pre-order index)."""
    return [WORDS[i % 26] for i in range(topology(branching, depth).total)]


# --- the abstract tree --------------------------------------------------------------------------------


class Objects:
    """A drawn tree of objects: ids and attributes of every node of a full tree, in pre-order.

    Node ``i`` owns attributes ``starts[i]:starts[i + 1]``; attribute ``a`` has key ``DOWN_UPPER[a]``
    and value ``DOWN[value_offset + a]``, as the release numbers them.
    """

    __slots__ = ("ids", "starts", "topo", "value_offset")

    def __init__(self, rng: Random, shape: Shape, *, tags: bool = False) -> None:
        topo = self.topo = topology(shape.branching, shape.depth)
        span, total = shape.span, topo.total
        draw = rng.random
        counts = [int(draw() * span) + 1 for _ in range(total)]
        id_off = 0 if tags else rng.randrange(26)
        self.ids = (UP_UPPER if tags else UP).upto(id_off + total)[id_off : id_off + total]
        self.value_offset = rng.randrange(26)
        self.starts = list(accumulate(counts, initial=0))
        DOWN_UPPER.upto(self.starts[-1])
        DOWN.upto(self.value_offset + self.starts[-1])

    def key(self, attr: int) -> str:
        return DOWN_UPPER.names[attr]

    def value(self, attr: int) -> str:
        return DOWN.names[self.value_offset + attr]

    def pick_node(self, rng: Random) -> int:
        """``rng.choice`` over the nodes (the same draw as choosing from a list of them)."""
        return rng.choice(range(self.topo.total))

    def unique_value(self, rng: Random) -> tuple[int, int] | None:
        """A random attribute ``(owner, attr)`` whose value is no object's id, or None if there is none."""
        ids = set(self.ids)
        starts = self.starts
        for _ in range(64):
            owner = self.pick_node(rng)
            attr = starts[owner] + rng.randrange(starts[owner + 1] - starts[owner])
            if self.value(attr) not in ids:
                return owner, attr
        owners = [(node, attr) for node in range(self.topo.total)
                  for attr in range(starts[node], starts[node + 1]) if self.value(attr) not in ids]
        return rng.choice(owners) if owners else None


class Written:
    """An ``Objects`` tree written in one notation: the document and its excerpts."""

    __slots__ = ("blocks", "lang", "notation", "objects", "text")

    def __init__(self, lang: str, objects: Objects) -> None:
        self.lang = lang
        self.notation = notation = NOTATIONS[lang]
        self.objects = objects
        starts, off = objects.starts, objects.value_offset
        n = starts[-1]
        # All attributes as one stream (key, value + separator, key, ...), a node's last value followed
        # by END; one join and one split make every node's block at level 0.
        stream: list[str] = [""] * (2 * n)
        stream[0::2] = notation.keys.upto(n)[:n]
        stream[1::2] = notation.values.upto(off + n)[off : off + n]
        last = notation.last_values.upto(off + n)
        for end in starts[1:]:
            stream[2 * end - 1] = last[off + end - 1]
        self.blocks = "".join(stream).split(END)[:-1]
        """Each node's attribute block as written at level 0 (at the root's indentation)."""
        self.text = self.subtree(0)

    def subtree(self, node: int) -> str:
        """Node ``node``'s subtree written as a root (its excerpt; the document for node 0)."""
        topo = self.objects.topo
        b, depth = topo.branching, topo.depth - topo.levels[node]
        stop = node + topo.sizes[node]
        blocks = self.blocks[node:stop]
        if self.notation.indent:
            blocks = list(map(str.replace, blocks, repeat("\n"), _seps(self.lang, b, depth)))
        columns = {"id": self.objects.ids[node:stop], "attrs": blocks}
        if "word" in self.notation.kinds:
            columns["word"] = _words(topo.branching, topo.depth)[node:stop]
        return _skeleton(self.lang, b, depth).fill(columns)

    def leaves(self) -> str:
        """Every leaf's excerpt, in document order, separated by a blank line."""
        topo = self.objects.topo
        ids = list(compress(self.objects.ids, topo.is_leaf))
        blocks = list(compress(self.blocks, topo.is_leaf))
        return _skeleton(self.lang, topo.branching, 0, len(ids)).fill({"id": ids, "attrs": blocks})


# --- line numbers of fixed layouts, for the injected errors ---------------------------------------------


def _pick_errors(rng: Random, candidates: list[int]) -> list[int]:
    """A non-empty random subset of ``candidates`` (each with probability 1/2), in order."""
    draw = rng.random
    chosen = [c for c in candidates if draw() < 0.5]
    return chosen or [rng.choice(candidates)]


def _json_broken(rng: Random, written: Written) -> str:
    """The release's JSON error: some objects lose their closing brace (a trailing comma moves up)."""
    objects = written.objects
    topo = objects.topo
    # Lines of a node: "{", "id", its attributes, "subs", and for inner nodes "]"; then "}".
    own = [objects.starts[i + 1] - objects.starts[i] + (4 if leaf else 5) for i, leaf in enumerate(topo.is_leaf)]
    before = list(accumulate(own, initial=0))
    closing = [before[i + size] - 2 * level - 1 for i, (size, level) in enumerate(zip(topo.sizes, topo.levels,
                                                                                       strict=True))]
    lines = written.text.split("\n")
    out: list[str] = []
    prev = 0
    for line in sorted(closing[i] for i in _pick_errors(rng, list(range(topo.total)))):
        segment = lines[prev:line]
        if lines[line].endswith(","):
            segment[-1] += ","
        out += segment
        prev = line + 1
    out += lines[prev:]
    return "\n".join(out)


def _yaml_broken(rng: Random, written: Written) -> str:
    """The release's YAML error: key-less ``:value`` lines after some leaves."""
    objects = written.objects
    topo = objects.topo
    leaves = topo.leaves
    names = UP.upto(len(leaves) + 26)
    off = rng.randrange(26)
    # Lines of a node: "id", its attributes, "subs"; a leaf's last line is just before the next node.
    after = list(accumulate((objects.starts[i + 1] - objects.starts[i] + 2 for i in range(topo.total)), initial=0))
    lines = written.text.split("\n")
    out: list[str] = []
    prev = 0
    for k, leaf in enumerate(_pick_errors(rng, leaves)):
        stop = after[leaf + 1]
        out += lines[prev:stop]
        out.append("  " * topo.levels[leaf] + ":" + names[off + k])
        prev = stop
    out += lines[prev:]
    return "\n".join(out)


def _xml_broken(rng: Random, text: str, topo: Topology) -> str:
    """The release's XML error: some elements lose their closing tag."""
    # Three lines per node (opening tag, word, closing tag) after the declaration line.
    drop = sorted(1 + 3 * i - 2 * topo.levels[i] + 3 * topo.sizes[i] - 1
                  for i in _pick_errors(rng, list(range(topo.total))))
    lines = text.split("\n")
    out: list[str] = []
    prev = 0
    for line in drop:
        out += lines[prev:line]
        prev = line + 1
    out += lines[prev:]
    return "\n".join(out)


# --- question sets -----------------------------------------------------------------------------------

BROKEN: dict[str, Callable[[Random, Written], str]] = {"json": _json_broken, "yaml": _yaml_broken}


def _notation(lang: str, rng: Random, shape: Shape, syntax_error: bool) -> list[QA]:
    while True:  # a value that is also some object's id would have two access paths: redraw
        objects = Objects(rng, shape)
        picked = objects.unique_value(rng)
        if picked is not None:
            break
    owner, attr = picked
    written = Written(lang, objects)
    text = written.text
    target = objects.pick_node(rng)
    path = "obj" + "".join([f'["subs"][{i}]' for i in objects.topo.paths[owner]]) + f'["{objects.key(attr)}"]'
    syntax_text = BROKEN[lang](rng, written) if syntax_error else text
    return [
        QA(f"{lang}.object_by_id", {"id": objects.ids[target]}, written.subtree(target), text),
        QA(f"{lang}.first_sub_id", {}, objects.ids[1], text),
        QA(f"{lang}.syntax", {}, "True" if syntax_error else "False", syntax_text),
        QA(f"{lang}.access_path", {"value": objects.value(attr)}, path, text),
        QA(f"{lang}.deepest", {}, written.leaves(), text),
    ]


def generate_json(rng: Random, shape: Shape, syntax_error: bool) -> list[QA]:
    """The five JSON questions about one JSON document."""
    return _notation("json", rng, shape, syntax_error)


def generate_yaml(rng: Random, shape: Shape, syntax_error: bool) -> list[QA]:
    """The five YAML questions about one YAML document."""
    return _notation("yaml", rng, shape, syntax_error)


def generate_xml(rng: Random, shape: Shape, syntax_error: bool) -> list[QA]:
    """The three XML questions about one XML document."""
    objects = Objects(rng, shape, tags=True)
    written = Written("xml", objects)
    text = XML_DECLARATION + "\n" + written.text
    target = objects.pick_node(rng)
    owner = objects.pick_node(rng)
    start = objects.starts[owner]
    value = objects.value(start + rng.randrange(objects.starts[owner + 1] - start))
    element = written.subtree(target)
    content = element[element.index("\n") + 1 : element.rindex("\n")].strip()  # between the tag lines
    return [
        QA("xml.tag_content", {"tag": objects.ids[target]}, content, text),
        QA("xml.tag_by_attr", {"value": value}, objects.ids[owner], text),
        QA("xml.syntax", {}, "True" if syntax_error else "False",
           _xml_broken(rng, text, objects.topo) if syntax_error else text),
    ]
