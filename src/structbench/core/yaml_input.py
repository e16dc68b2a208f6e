"""YAML files a user gives (suite files, prices files), read safely: a hostile file (a "billion laughs", deep
nesting, a repeated key) is refused from the parser's events before any tree is built, and every later problem
can name the line of the key it is about."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from structbench.core.errors import UsageError

MAX_DEPTH = 64
"""Deepest nesting of mappings and lists (chat-template arguments may nest a little)."""
MAX_ALIASES = 200
"""Most ``*alias`` references in one file."""
MAX_VALUES = 100_000
"""Most values the file stands for once every alias is expanded (a "billion laughs" stands for 10**9)."""


def key_lines(node: yaml.Node, path: tuple[Any, ...], lines: dict[tuple[Any, ...], int]) -> None:
    """Record the line of every mapping key and sequence item below ``node``, by its path."""
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            sub = (*path, key.value)
            lines[sub] = key.start_mark.line + 1
            key_lines(value, sub, lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            key_lines(item, (*path, i), lines)


def line_of(lines: dict[tuple[Any, ...], int], loc: tuple[Any, ...]) -> int:
    """The line of ``loc`` or of its nearest ancestor the file shows."""
    path = tuple(loc)
    while path and path not in lines:
        path = path[:-1]
    return lines.get(path, 1)


def field_name(loc: tuple[Any, ...]) -> str:
    """``('models', 0, 'generation', 'temprature')`` -> ``models[0].generation.temprature``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


_Seen = dict[Any, tuple[str, int]]
"""A mapping's keys as they read -> (as written, line)."""
MERGE_TAG = "tag:yaml.org,2002:merge"
"""``<<``: not a key but a merge, which a mapping may hold several of."""


def scalar_value(event: yaml.ScalarEvent, loader: yaml.SafeLoader) -> Any:
    """What a scalar reads as, tagged as ``safe_load`` tags it (``1`` and ``0x1`` the int 1, ``'1'`` the text,
    ``yes`` True); ``MERGE_TAG`` for ``<<``."""
    tag = event.tag
    if tag is None or tag == "!":
        tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
    if tag == MERGE_TAG:
        return MERGE_TAG
    return loader.construct_object(yaml.ScalarNode(tag, event.value))


def check_shape(text: str, path: Path) -> None:
    """Refuse, from the parser's events alone (no tree built, nothing expanded), a file nested deeper than
    ``MAX_DEPTH``, with more than ``MAX_ALIASES`` aliases, standing for more than ``MAX_VALUES`` values once its
    aliases are expanded, or repeating a key of a mapping (YAML forbids it; a loader would keep the last). Keys are
    compared as they read (``scalar_value``), as the mapping loaded holds them: ``a`` and ``"a"``, ``1`` and ``0x1``,
    ``1`` and ``true`` (Python's one key) are one key, ``1`` and ``'1'`` two."""
    open_nodes: list[tuple[int, str | None, _Seen | None]] = []  # (values before it, anchor, keys seen: mappings)
    keys_of: dict[str, Any] = {}  # anchor of a scalar -> its value, for a key that is its alias
    loader = yaml.SafeLoader("")  # (its resolver and constructor only)
    key_next: list[bool] = []  # per open mapping: whether its next node is a key
    sizes: dict[str, int] = {}  # anchor -> values its node stands for
    total = aliases = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1 if event.start_mark is not None else 1
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise UsageError(f"{path}:{line}: more than {MAX_ALIASES} aliases (*name): refused")
            if any(anchor == event.anchor for _, anchor, _ in open_nodes):  # it would contain itself, for ever
                raise UsageError(f"{path}:{line}: the alias *{event.anchor} stands inside the value it names: refused")
        if isinstance(event, yaml.NodeEvent):  # scalar, alias, or the start of a mapping or list
            if open_nodes and open_nodes[-1][2] is not None:
                is_key = key_next[-1]
                key_next[-1] = not is_key
                keys = open_nodes[-1][2]
                if is_key and isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
                    _new_key(event, keys, keys_of, loader, path, line)
            size = sizes.get(event.anchor or "", 1) if isinstance(event, yaml.AliasEvent) else 1
            total += size
            if total > MAX_VALUES:
                raise UsageError(f"{path}:{line}: the file stands for more than {MAX_VALUES:,} values once its "
                                 "aliases are expanded: refused")
            if isinstance(event, yaml.CollectionStartEvent):
                if len(open_nodes) >= MAX_DEPTH:
                    raise UsageError(f"{path}:{line}: nested more than {MAX_DEPTH} levels deep: refused")
                mapping = isinstance(event, yaml.MappingStartEvent)
                open_nodes.append((total - 1, event.anchor, {} if mapping else None))
                if mapping:
                    key_next.append(True)
            elif isinstance(event, yaml.ScalarEvent) and event.anchor:
                sizes[event.anchor] = 1
                keys_of[event.anchor] = scalar_value(event, loader)
        elif isinstance(event, yaml.CollectionEndEvent):
            before, anchor, seen = open_nodes.pop()
            if seen is not None:
                key_next.pop()
            if anchor:
                sizes[anchor] = total - before


def _new_key(event: yaml.ScalarEvent | yaml.AliasEvent, keys: _Seen, keys_of: dict[str, Any],
             loader: yaml.SafeLoader, path: Path, line: int) -> None:
    """Record a mapping's key; refuse one it holds already, as read (a key written another way names the first)."""
    if isinstance(event, yaml.AliasEvent):
        if event.anchor not in keys_of:  # (a collection's alias as a key: no loader reads it as a key)
            return
        value, written = keys_of[event.anchor], f"*{event.anchor}"
    else:
        try:
            value, written = scalar_value(event, loader), event.value
        except ValueError as err:  # (``!!int abc``, as safe_load would read it)
            raise UsageError(f"{path}:{line}: key {event.value!r} is not its tag's value: {err}") from None
    if value is MERGE_TAG:
        return
    try:
        first = keys.get(value)
    except TypeError:  # (unhashable: safe_load refuses the file itself)
        return
    if first is not None:
        same = "" if first[0] == written else f" (read as the key {first[0]!r} of line {first[1]})"
        raise UsageError(f"{path}:{line}: key {written!r} appears twice in this mapping{same}")
    keys[value] = (written, line)


def read_yaml(path: Path, *, kind: str, max_bytes: int) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """The data of the YAML (or JSON) file at ``path`` and the line of each of its keys and items (``key_lines``),
    read at most ``max_bytes`` and its shape checked first (``check_shape``); every problem is a ``UsageError``
    naming the file (``kind``: what it is, as "the suite file") and, where it can, the line."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise UsageError(f"{path}: {kind} is {size:,} bytes, more than the {max_bytes:,} accepted")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"{path}: {kind} cannot be read: {getattr(err, 'strerror', None) or err}") from None
    try:
        check_shape(text, path)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise UsageError(f"{path}{line}: not YAML (nor JSON): {getattr(err, 'problem', None) or err}") from None
    except ValueError as err:  # a value its tag cannot read (``!!int abc``, ``!!timestamp 2001-99-99``)
        raise UsageError(f"{path}: not YAML (nor JSON): a tagged value cannot be read: {err}") from None
    lines: dict[tuple[Any, ...], int] = {}
    if node is not None:
        key_lines(node, (), lines)
    return data, lines
