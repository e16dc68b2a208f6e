"""Ground truth from real parsers, checked against what the generator says.

Every generated text is read back with a real parser (``csv``; ``orjson``; rapidyaml for YAML, with
libyaml's parser confirming syntax errors; ``lxml`` for XML, with expat confirming syntax errors; a
heading parser for the markup languages), every answer is recomputed from that parse and the
question's slots, and any disagreement raises ``GroundTruthError``: a generator bug is never a
silently dropped sample. Excerpt answers are parsed too and must equal the objects the document's
parse holds.

A structure's document is parsed once and all its questions are answered from that one parse; the
scans over it (ids, owners of a value, leaves) run as C-level ``map``/``compress`` passes. A Syntax
question about the intact document needs no second parse: the document's own parse answers it.
"""

from __future__ import annotations

import csv
import re
import threading
from collections.abc import Callable
from functools import cache, wraps
from itertools import chain, compress, islice, repeat
from operator import contains, itemgetter
from pyexpat import ExpatError, ParserCreate
from typing import Any

import orjson
import ryml
import yaml
import yaml._yaml as libyaml
from lxml import etree

from structbench.benchmarks.structext.generator.common import QA, GroundTruthError

Verifier = Callable[[list[QA]], None]


def _check(qa: QA, truth: object) -> None:
    if truth != qa.answer:
        raise GroundTruthError(
            f"{qa.template} {qa.slots}: the generator's answer {qa.answer[:200]!r} disagrees with the "
            f"parser's {str(truth)[:200]!r}"
        )


def _same(qa: QA, parsed: object, expected: object) -> None:
    if parsed != expected:
        raise GroundTruthError(f"{qa.template} {qa.slots}: the excerpt does not parse to the object asked for")


def _strict(verify: Verifier) -> Verifier:
    """Any failure while reading the parse (a missing key, a wrong type) is a ground-truth error too."""

    @wraps(verify)
    def run(qas: list[QA]) -> None:
        try:
            verify(qas)
        except GroundTruthError:
            raise
        except Exception as err:
            raise GroundTruthError(f"{qas[0].template}: the parsed text is not what was generated ({err!r})") from err

    return run


def _document(qas: list[QA], broken: str) -> str:
    """The text every question but the Syntax one reads."""
    return next(qa.reference for qa in qas if qa.template != broken)


# --- CSV and tree ------------------------------------------------------------------------------------


def _table(text: str) -> list[dict[str, str]]:
    """A CSV table's rows as dicts keyed by its header (``csv.reader``; a ragged row is an error)."""
    header, *rows = csv.reader(text.split("\n"))
    return [dict(zip(header, row, strict=True)) for row in rows]


def verify_csv(qas: list[QA]) -> None:
    bio_text, work_text = qas[0].reference.split("\n\n")
    bio, work = _table(bio_text), {row["primeKey"]: row for row in _table(work_text)}
    people = [{**row, **work[row["primeKey"]]} for row in bio]
    for qa in qas:
        s = qa.slots
        if qa.template == "csv.lookup":
            truth = next(p[s["field"]] for p in people if p["primeKey"] == s["key"])
        elif qa.template == "csv.salary":
            truth = str(sum(int(p["salary"]) > s["threshold"] for p in people))
        elif qa.template == "csv.gender":
            truth = str(sum(p["gender"] == s["gender"] for p in people))
        else:
            truth = str(sum(p["location"] == s["state"] and int(p["height"]) > s["height"] for p in people))
        _check(qa, truth)


def _depths(root: str, fathers: list[str], children: list[str], parent: dict[str, str]) -> dict[str, int]:
    """Every node's depth: in one pass when each edge's father is already placed, else by walking up."""
    depth = {root: 0}
    known = depth.get
    for father, child in zip(fathers, children, strict=True):
        above = known(father)
        if above is None:
            break
        depth[child] = above + 1
    else:
        return depth
    for node in children:  # walk up to a node of known depth, then set the depths on the way down
        chain = [node]
        while chain[-1] not in depth:
            chain.append(parent[chain[-1]])
            if len(chain) > len(children) + 1:
                raise GroundTruthError("tree: the edges hold a cycle")
        base = depth[chain.pop()]
        for k, up in enumerate(reversed(chain), start=1):
            depth[up] = base + k
    return depth


def verify_tree(qas: list[QA]) -> None:
    text = qas[0].reference
    parts = text.replace("\n", "->").split("->")
    if len(parts) != 2 * (text.count("\n") + 1):
        raise GroundTruthError("tree: a line is not one father->child edge")
    fathers, children = parts[0::2], parts[1::2]
    parent = dict(zip(children, fathers, strict=True))
    if len(parent) != len(children):
        raise GroundTruthError("tree: a node has two fathers")
    (root,) = set(fathers) - parent.keys()
    depth = _depths(root, fathers, children, parent)

    def route(node: str) -> list[str]:
        out = [node]
        while out[-1] != root:
            out.append(parent[out[-1]])
        return out[::-1]

    for qa in qas:
        if qa.template == "tree.height":
            _check(qa, str(max(depth.values())))
        elif qa.template == "tree.depth":
            _check(qa, str(depth[qa.slots["node"]]))
        else:
            _check(qa, "->".join(route(qa.slots["node"])))


# --- JSON and YAML -----------------------------------------------------------------------------------


class Objects:
    """The objects of a parsed ``subs`` tree, read level by level with C-level passes.

    ``levels[k]`` holds the objects ``k`` levels below the root in document order, ``parents[k][j]``
    the index in ``levels[k - 1]`` of object ``j``'s parent and ``positions[k][j]`` its place in that
    parent's ``subs``.
    """

    def __init__(self, root: dict[str, Any]) -> None:
        self.levels = [[root]]
        self.parents = [[-1]]
        self.positions = [[0]]
        while True:
            subs = list(map(itemgetter("subs"), self.levels[-1]))
            counts = list(map(len, subs))
            if not any(counts):
                break
            self.levels.append(list(chain.from_iterable(subs)))
            self.parents.append(list(chain.from_iterable(map(repeat, range(len(counts)), counts))))
            self.positions.append(list(chain.from_iterable(map(range, counts))))
        self.all = list(chain.from_iterable(self.levels))
        self.ids = list(map(itemgetter("id"), self.all))

    def leaves(self) -> list[dict[str, Any]]:
        """The objects without ``subs``, in document order."""
        if all(map(itemgetter("subs"), chain.from_iterable(self.levels[:-1]))):
            return self.levels[-1]  # every leaf is on the last level, whose order is document order
        out: list[dict[str, Any]] = []
        stack = [self.levels[0][0]]
        while stack:
            obj = stack.pop()
            subs = obj["subs"]
            if subs:
                stack += reversed(subs)
            else:
                out.append(obj)
        return out

    def access_paths(self, value: str) -> list[str]:
        """Every ``obj["subs"][i]...["key"]`` path whose value is ``value``."""
        out = []
        for depth, level in enumerate(self.levels):
            for j in compress(range(len(level)), map(contains, map(dict.values, level), repeat(value))):
                steps: list[str] = []
                node = j
                for up in range(depth, 0, -1):
                    steps.append(f'["subs"][{self.positions[up][node]}]')
                    node = self.parents[up][node]
                prefix = "obj" + "".join(reversed(steps))
                out += [f'{prefix}["{key}"]' for key, val in level[j].items() if val == value]
        return out


class _Ryml(threading.local):
    """rapidyaml with the tree sized up front and one output buffer reused (growing is most of a parse)."""

    def __init__(self) -> None:
        self.tree: Any = None
        self.out = bytearray(1 << 20)

    def parse(self, text: str) -> Any:
        """The tree of ``text``, valid until the next ``parse``."""
        data = text.encode()
        tree = self.tree = ryml.Tree()  # clearing a used tree costs more than a new one
        tree.reserve(data.count(b"\n") + data.count(b"- ") + 16)  # a node per line, two per "- key:" line
        tree.reserve_arena(len(data) + 16)
        ryml.parse_csubstr(data, tree)
        return tree

    def json(self, node: int) -> memoryview:
        """Node ``node`` of the last parse written as JSON, valid until the next ``json``."""
        failed, size = ryml.emit_json_to_substr(self.tree, node, self.out)
        if failed:
            self.out = bytearray(2 * size)
            failed, size = ryml.emit_json_to_substr(self.tree, node, self.out)
        return memoryview(self.out)[:size]


_RYML = _Ryml()


def load_yaml(text: str) -> Any:
    """Parse one YAML document with rapidyaml (C++), read back through its JSON emitter."""
    tree = _RYML.parse(text)
    root = tree.root_id()
    if tree.is_stream(root):
        raise GroundTruthError(f"yaml: the text holds {tree.num_children(root)} documents where one was expected")
    return orjson.loads(_RYML.json(root))


class EmittedJson:
    """A parse written out as JSON by rapidyaml's emitter, compared with Python values.

    The emitter writes two-space indentation and a final newline, as ``orjson`` does with
    ``OPT_INDENT_2 | OPT_APPEND_NEWLINE``. When the emitted text equals ``orjson``'s writing of the other
    value, the parse is that value (``orjson`` reads its own writing back exactly), so reading the
    emitted text is skipped; otherwise it is read and compared. Either way ``==`` is the comparison of
    the parse itself.
    """

    __slots__ = ("emitted",)

    def __init__(self, emitted: str | bytes) -> None:
        self.emitted = emitted.encode() if isinstance(emitted, str) else emitted

    def __eq__(self, other: object) -> bool:
        if self.emitted == orjson.dumps(other, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE):
            return True
        return bool(orjson.loads(self.emitted) == other)

    __hash__ = None  # type: ignore[assignment]


Read = Callable[[str, str, list[str]], tuple[Any, Any, Any]]
"""``(document, object excerpt, deepest excerpts) -> (their parses)``; the excerpts' parses may be
stand-ins that compare like the parse (``EmittedJson``)."""


def _read_json(text: str, excerpt: str, chunks: list[str]) -> tuple[Any, Any, Any]:
    return orjson.loads(text), orjson.loads(excerpt), orjson.loads("[" + ",".join(chunks) + "]")


def _as_sequence(chunks: list[str]) -> str:
    """YAML mappings written at column 0, turned into the items of one block sequence."""
    return "- " + "\n- ".join([chunk.replace("\n", "\n  ") for chunk in chunks])


def _read_yaml(text: str, excerpt: str, chunks: list[str]) -> tuple[Any, Any, Any]:
    """All three texts in one rapidyaml parse: a stream of three documents, the first one ``text`` verbatim."""
    tree = _RYML.parse("\n---\n".join([text, excerpt, _as_sequence(chunks)]))
    docs = list(ryml.children(tree))
    if len(docs) != 3:
        raise GroundTruthError(f"yaml: a text holds a document marker ({len(docs)} documents where 3 were joined)")
    root = orjson.loads(_RYML.json(docs[0]))
    return root, EmittedJson(bytes(_RYML.json(docs[1]))), EmittedJson(bytes(_RYML.json(docs[2])))


def _yaml_rejects(text: str) -> bool:
    """Whether libyaml's parser (PyYAML's C parser, no object construction) rejects the text."""
    try:
        libyaml.CParser(text).raw_parse()
    except yaml.YAMLError:
        return True
    return False


def _json_rejects(text: str) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return True
    return False


def _syntax_truth(reference: str, document: str, rejects: Callable[[str], bool]) -> str:
    """A Syntax answer: the document already parsed, so only a different text needs ``rejects``."""
    return "True" if reference is not document and reference != document and rejects(reference) else "False"


def _verify_notation(lang: str, read: Read, rejects: Callable[[str], bool]) -> Verifier:
    """The check of one notation's five questions, all answered from one ``read`` of the texts."""

    @_strict
    def verify(qas: list[QA]) -> None:
        by_kind = {qa.template.split(".", 1)[1]: qa for qa in qas}
        if len(qas) != 5 or set(by_kind) != {"object_by_id", "first_sub_id", "syntax", "access_path", "deepest"}:
            raise GroundTruthError(f"{lang}: expected the five questions of one document, got {sorted(by_kind)}")
        text = by_kind["object_by_id"].reference
        if any(qa.reference is not text and qa.reference != text for kind, qa in by_kind.items() if kind != "syntax"):
            raise GroundTruthError(f"{lang}: the questions do not share one document")
        try:
            root, excerpt, deepest = read(text, by_kind["object_by_id"].answer, by_kind["deepest"].answer.split("\n\n"))
        except GroundTruthError:
            raise
        except Exception as err:  # any parser's error: the document or an excerpt is not well formed
            raise GroundTruthError(f"{lang}: the document or an excerpt answer does not parse ({err!r})") from err
        objects = Objects(root)
        ids = objects.ids
        for kind, qa in by_kind.items():
            if kind == "object_by_id":
                ident = qa.slots["id"]
                if ids.count(ident) != 1:
                    raise GroundTruthError(f"{qa.template}: {ids.count(ident)} objects have id {ident!r}")
                _same(qa, excerpt, objects.all[ids.index(ident)])
            elif kind == "first_sub_id":
                _check(qa, root["subs"][0]["id"])
            elif kind == "syntax":
                _check(qa, _syntax_truth(qa.reference, text, rejects))
            elif kind == "access_path":
                if qa.slots["value"] in ids:
                    raise GroundTruthError(f"{qa.template}: value {qa.slots['value']!r} is also an id")
                paths = objects.access_paths(qa.slots["value"])
                _check(qa, paths[0] if len(paths) == 1 else f"<{len(paths)} paths>")
            else:
                _same(qa, deepest, objects.leaves())

    return verify


verify_json = _verify_notation("json", _read_json, _json_rejects)
verify_yaml = _verify_notation("yaml", _read_yaml, _yaml_rejects)


# --- XML ---------------------------------------------------------------------------------------------


def _xml_parse(text: str) -> Any:
    return etree.fromstring(text.encode())


def _xml_rejects(text: str) -> bool:
    """Whether expat (the standard library's XML parser, stopping at the first error) rejects the text."""
    try:
        ParserCreate().Parse(text, True)
    except ExpatError:
        return True
    return False


_WITH_VALUE = etree.XPath("//*[@*=$value]")
"""Every element with an attribute of the given value."""


@_strict
def verify_xml(qas: list[QA]) -> None:
    text = _document(qas, "xml.syntax")
    root = _xml_parse(text)
    for qa in qas:
        if qa.template == "xml.tag_content":
            (element,) = list(root.iter(qa.slots["tag"]))
            written = etree.tostring(element, encoding="unicode", with_tail=False)
            inner = written[written.index(">") + 1 : written.rindex("</")]
            level = sum(1 for _ in element.iterancestors())
            _check(qa, inner.replace("\n" + " " * level, "\n").strip())
        elif qa.template == "xml.tag_by_attr":
            tags = [element.tag for element in _WITH_VALUE(root, value=qa.slots["value"])]
            _check(qa, tags[0] if len(tags) == 1 else f"<{len(tags)} tags>")
        else:
            _check(qa, _syntax_truth(qa.reference, text, _xml_rejects))


# --- markup ------------------------------------------------------------------------------------------

_MARKS = {"markdown": "#", "org": r"\*"}


@cache
def heading_pattern(lang: str, low: int, high: int) -> re.Pattern[str]:
    """Heading lines of ``lang`` whose level is between ``low`` and ``high``, with the newline before them.

    Markdown and Org repeat their mark per level (``## Name``); LaTeX heading commands are
    ``\\section``, ``\\subsection``, ... (one more "sub" per level) and ``\\paragraph`` (level 4).
    The match starts at the newline before the line (a literal prefix, which ``re`` scans for fast).
    """
    if lang in _MARKS:
        return re.compile(rf"\n{_MARKS[lang]}{{{low},{high}}} \S+$", re.MULTILINE)
    commands = [r"(?:sub)" * (level - 1) + "section" for level in range(low, high + 1)]
    if low <= 4 <= high:
        commands.append("paragraph")
    return re.compile(rf"\n\\(?:{'|'.join(commands)})\{{[^}}\n]*\}}$", re.MULTILINE)


BOLD = {
    "markdown": re.compile(r"\*\*(.+?)\*\*"),
    "latex": re.compile(r"\\textbf\{([^}]*)\}"),
    "org": re.compile(r"\*([^*\n]+)\*"),
}
IMAGE = {
    "markdown": re.compile(r'!\[[^\]]*\]\(([^)\s]+)(?: "[^"]*")?\)'),
    "latex": re.compile(r"\\includegraphics(?:\[[^\]]*\])?\{([^}]*)\}"),
    "org": re.compile(r"\[\[([^\]]+)\]\]"),
}


def section(lang: str, text: str, indices: list[int]) -> str:
    """The excerpt of the ``indices[-1]``-th heading of its level under the path ``indices[:-1]``.

    It runs from that heading line to the next heading of the same or a higher level (or the end).
    """
    text = "\n" + text  # every line, the first included, now follows a newline
    start, stop = 0, len(text)
    for level, wanted in enumerate(indices, start=1):
        inside = heading_pattern(lang, level, level).finditer(text, start, stop)
        found = next(islice(inside, wanted - 1, None), None)
        if found is None:
            return f"<no {wanted}th heading of level {level}>"
        start = found.start()
        following = heading_pattern(lang, 1, level).search(text, found.end())
        stop = following.start() if following else len(text)
    return text[start + 1 : stop]


def _verify_markup(lang: str) -> Verifier:
    @_strict
    def verify(qas: list[QA]) -> None:
        text = qas[0].reference
        for qa in qas:
            kind = qa.template.split(".", 1)[1]
            if kind == "bold":  # headings never hold a bold marker followed by text and a closing one
                _check(qa, "\n".join(BOLD[lang].findall(text)))
            elif kind == "images":
                _check(qa, "\n".join(IMAGE[lang].findall(text)))
            else:
                _check(qa, section(lang, text, qa.facts["indices"]))

    return verify


VERIFIERS: dict[str, Verifier] = {
    "csv": _strict(verify_csv),
    "tree": _strict(verify_tree),
    "json": verify_json,
    "yaml": verify_yaml,
    "xml": verify_xml,
    "markdown": _verify_markup("markdown"),
    "latex": _verify_markup("latex"),
    "org": _verify_markup("org"),
}
"""The parser-based check for each language's question set."""
