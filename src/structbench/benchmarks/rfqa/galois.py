"""Reading replies as galois did when the paper's numbers were made (``reading=galois``, what the presets use).

The paper's runs used dbunibas/galois; its numbers are galois' own scores of the runs, in the results files
committed on 2025-05-09 (commit ``9d2aa7f``, branch ``reproducibility``), which give every cell of Table 2. How
the code of that commit reads a reply (the conversation is the same in the code of the paper's first version,
``111060a`` of 2025-05-16):

- **Text to JSON** (``Mapper.toCleanJsonList`` then Jackson) as on 2025-05-09, when the published runs were
  scored (commit ``9d2aa7f``, the results files): the raw reply, a reasoning model's thought included (the
  removal of a thought between ``<think>`` and ``</think>``, of Markdown fences and of ``{}`` came the next day);
  a lone object wrapped in a list; the text from the first ``[`` to the last ``]``, else from the first ``[`` to
  the last ``}`` closed with ``]``, else the quoted strings listed. Jackson reads it leniently (comments, single
  quotes, unquoted names, leading zeros; trailing text ignored, so a table in a thought is read before the
  answer's) as a list of objects; anything else, a truncated reply included, raises, and the executor re-prompts.
- **NL and SQL** (``TogetheraiLlama3NL/SQLQueryExecutor``, which the OpenAI ones extend): each object becomes a
  tuple with the model's own keys and values, in the reply's order (``mapToTupleIgnoreMissingAttributes``).
  The metrics keep the cells whose attribute is *exactly* an expected one, and tuple similarity compares them
  by position with the expected tuple: a renamed key is an absent cell, a reordered one a mismatch.
- **CoT** (``AbstractEntityQueryExecutor``, ``mapToTuple``): each base attribute is looked up exactly (a key
  in another case reads as NULL); a numeric attribute's text has ``,`` turned into ``.`` and ``K``/``k`` and
  ``M``/``m`` into ``000``/``000000`` before it is typed (``"1,500"`` is 1.5, ``"2.5M"`` 2.5000000); what does
  not type is NULL (``LLMScan.checkTupleTypes``).
- **The conversation**: at most ``maxIterations`` = 10 calls; stop at a blank reply, an empty list, or a reply
  that adds no tuple; a tuple already read (the same reply included) is dropped; a reply that does not parse
  gets one "Respond in an appropriate JSON format." whose tuples are added (NL and SQL; in CoT a null
  dereference drops them), and the loop goes on. LangChain4j's ``ConversationalChain`` keeps the last 10
  messages, so from the sixth call on the model no longer sees the question.

Speedy's typing (not released) is taken to be Java's ``Long.parseLong`` / ``Double.parseDouble``. Not
reproduced: for NL and SQL, galois' ``LLMScan.checkTupleTypes`` also types the cells whose name is a numeric
column of the query's first table, turning one that does not type (``"1,500"``) into NULL, or dropping the
tuple where the column is declared not nullable; the nullability is in galois' experiment configs, which
structbench does not ship.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from structbench.benchmarks.rfqa.database import NUMERIC_TYPES
from structbench.benchmarks.rfqa.normalize import ABSENT
from structbench.core.untrusted import TooDeep, raw_decode

MAX_MESSAGES = 10
"""LangChain4j's default chat memory: the last 10 messages are sent."""


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_no_constants)
"""Strict JSON as Jackson reads it: NaN and Infinity are errors."""


class Unreadable(ValueError):
    """A reply galois' JSON reading raises on (the executor re-prompts)."""


def clean_list(reply: str) -> str:
    """``Mapper.toCleanJsonList`` of 2025-05-09: the part of ``reply`` galois hands to the JSON parser. The raw reply,
    a thought included: the cleaning of ``<think>``, Markdown fences and ``{}`` came on 2025-05-10, after the
    published runs were scored."""
    text = reply
    if "[" not in text and "]" not in text and text.startswith("{") and text.endswith("}"):
        text = f"[{text}]"
    if "[" in text and "]" in text:  # getContentBetween: String.substring throws when "]" comes before "["
        start, end = text.index("["), text.rindex("]") + 1
        if end < start:
            raise Unreadable("the last ] comes before the first [")
        text = text[start:end]
    if text.startswith("[") and text.endswith("]"):
        return text
    if "}" in text and "[" in text:
        start, end = text.index("["), text.rindex("}") + 1
        if end < start:
            raise Unreadable("the last } comes before the first [")
        body = text[start:end]
    else:
        keys = "".join(f'"{k}",\n' for k in re.findall(r'"(.*?)"', text))
        body = "[" + (keys[:-2] if len(keys) >= 3 else "") + "\n"
    return body + "]"


_NUMBER = re.compile(r"(-?)(\d+)(\.\d+)?([eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_$][\w$]*")


def _lenient(text: str) -> str:
    """Jackson's leniencies galois turns on, as strict JSON: comments (``//``, ``/* */``, ``#``), single-quoted
    strings, unquoted field names and numbers with leading zeros."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j, chars = i + 1, []
            while j < n and text[j] != c:
                if text[j] == "\\" and j + 1 < n:
                    chars.append(text[j : j + 2])
                    j += 2
                    continue
                chars.append(text[j])
                j += 1
            body = "".join(chars)
            if c == "'":
                body = body.replace("\\'", "'").replace('"', '\\"')
            out.append(f'"{body}"')
            i = j + 1
        elif text.startswith("//", i) or c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif m := _NUMBER.match(text, i):
            sign, whole, fraction, exponent = m.groups()
            out.append(sign + (whole.lstrip("0") or "0") + (fraction or "") + (exponent or ""))
            i = m.end()
        elif m := _NAME.match(text, i):
            word = m.group(0)
            rest = text[m.end() :].lstrip()
            out.append(f'"{word}"' if rest.startswith(":") and word not in ("true", "false", "null") else word)
            i = m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _decode(text: str) -> Any:
    """Jackson's ``readValue``: leading whitespace skipped, text after the value ignored. A value nested more than
    ``core.untrusted.MAX_NESTING`` levels deep is unreadable here (Jackson reads up to 1,000; a table nests three)."""
    text = text.lstrip()
    try:
        try:
            return raw_decode(text, _DECODER)[0]
        except TooDeep:
            raise
        except ValueError:
            return raw_decode(_lenient(text).lstrip(), _DECODER)[0]
    except ValueError as err:  # TooDeep too
        raise Unreadable(str(err)) from None


def parse_rows(reply: str) -> list[dict[str, Any] | None]:
    """``JSONEntitiesParser.parse``: the reply's objects (``None`` for a JSON null); ``Unreadable`` where galois
    raises."""
    value = _decode(clean_list(reply))
    if not isinstance(value, list) or not all(v is None or isinstance(v, dict) for v in value):
        raise Unreadable("not a list of objects")
    return value


def java_text(value: Any) -> str:
    """``Object.toString`` of a JSON value as Jackson maps it (what tuple identity and typing read)."""
    kind = type(value)
    if kind is str:  # the common cases first: this runs for every cell of every tuple read
        return value
    if kind is int:
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, list):
        return "[" + ", ".join(java_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={java_text(v)}" for k, v in value.items()) + "}"
    return str(value)


def _java_double(x: float) -> str:
    """``Double.toString``: plain between 1e-3 and 1e7, else the shortest digits as ``d.dddE±n``."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        return repr(x)  # Python prints this range plainly, with the same shortest digits
    sign, digits, exponent = Decimal(repr(x)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    power = exponent + len(digits) - 1
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{power}"


def tuple_identity(record: Mapping[str, Any]) -> str:
    """What ``isAlreadyContained`` compares (``Tuple.toStringNoOID``): every attribute and value as text."""
    return "|".join([f"{k}:{v}" if type(v) is str else f"{k}:{java_text(v)}" for k, v in record.items()])


# --- CoT: mapToTuple ----------------------------------------------------------------------------------------

_JAVA_LONG = re.compile(r"[+-]?\d+")
_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?)")


def _typed_number(text: str, db_type: str) -> int | float | None:
    """Speedy's typing of a numeric attribute, taken as ``Long.parseLong`` for integer types and
    ``Double.parseDouble`` otherwise (Java trims blanks for the latter); None where it raises."""
    base = _base_type(db_type)
    if base != "DOUBLE" and base != "FLOAT" and base != "DECIMAL":
        return int(text) if _JAVA_LONG.fullmatch(text) and -(2**63) <= int(text) < 2**63 else None
    stripped = text.strip(" \t\n\r\x0b\x0c\x00")
    if not _JAVA_DOUBLE.fullmatch(stripped) or stripped.lstrip("+-") in ("NaN", "Infinity"):
        return None  # not a number, or not one a table can hold
    return float(stripped.rstrip("fFdD"))


def numeric_rewrite(text: str) -> str:
    """``safelyParseCellValue``'s rewrite before typing: ``,`` -> ``.``, ``K``/``k`` -> ``000``, ``M``/``m`` ->
    ``000000``."""
    return text.replace(",", ".").replace("K", "000").replace("k", "000").replace("M", "000000").replace("m", "000000")


@functools.lru_cache(maxsize=256)
def _base_type(db_type: str) -> str:
    """A column type without its parameters, in upper case (cached: the same few types type every cell)."""
    return db_type.split("(")[0].upper()


def typed_cell(value: Any, db_type: str) -> Any:
    """``mapToTuple``'s reading of one attribute's value: NULL for a missing key, a JSON null or ``"null"``;
    booleans from YES/NO or ``true``; numbers after ``numeric_rewrite`` (NULL where they do not type)."""
    if value is None or java_text(value).lower() == "null":
        return None
    base = _base_type(db_type)
    if base == "BOOLEAN":
        text = java_text(value)
        return True if text.upper() == "YES" else False if text.upper() == "NO" else text.lower() == "true"
    if base in NUMERIC_TYPES:
        return _typed_number(numeric_rewrite(java_text(value)), db_type)
    return value


_EXACT = 2**53
"""Integers below this in magnitude are exact as doubles (and well within a Java long)."""


@functools.lru_cache(maxsize=256)
def _column_typer(db_type: str) -> Callable[[Any], Any]:
    """``typed_cell`` for a column of ``db_type``, answering without text the values a table mostly holds (a large
    base table is read cell by cell): a string in a text column is itself (NULL for ``"null"``); an integer in a
    numeric column is what ``Long.parseLong`` / ``Double.parseDouble`` make of its text (itself, or as a double);
    a finite double is itself in a floating column and NULL in an integer one (its text has a ``.`` or an ``E``).
    Any other value takes ``typed_cell``'s way."""
    base = _base_type(db_type)
    slow = functools.partial(typed_cell, db_type=db_type)
    if base in NUMERIC_TYPES:
        floating = base in ("DOUBLE", "FLOAT", "DECIMAL")

        def number(value: Any) -> Any:
            kind = type(value)
            if kind is int and -_EXACT < value < _EXACT:
                return float(value) if floating else value
            if kind is float and math.isfinite(value):
                return value if floating else None
            return slow(value)

        return number
    if base == "BOOLEAN":
        return slow

    def text(value: Any) -> Any:
        if type(value) is str:
            return None if value.lower() == "null" else value
        return slow(value)

    return text


def base_reader(columns: Sequence[str], types: Sequence[str]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """``mapToTuple`` for one base table: a record's base attributes, each looked up exactly and typed as
    ``typed_cell`` types it."""
    typers = [(column, _column_typer(db_type)) for column, db_type in zip(columns, types, strict=True)]

    def read(record: Mapping[str, Any]) -> dict[str, Any]:
        get = record.get
        return {column: typer(get(column)) for column, typer in typers}

    return read


def base_row(record: Mapping[str, Any], columns: Sequence[str], types: Sequence[str]) -> dict[str, Any]:
    """``mapToTuple`` of one record (``base_reader``)."""
    return base_reader(columns, types)(record)


# --- NL and SQL: the cells the metrics read ------------------------------------------------------------------


def scored_row(record: Mapping[str, Any], columns: Sequence[str]) -> list[Any]:
    """The cells galois' metrics compare, by position with the expected tuple: the values of the keys that are
    exactly expected attributes, in the reply's order, then ``ABSENT`` for the ones it lacks."""
    wanted = set(columns)
    cells = [v for k, v in record.items() if k in wanted]
    return cells + [ABSENT] * (len(columns) - len(cells))


# --- Java's HashMap order (what Jackson writes a HashMap in, what a loop over its keys meets first) ------------


def java_string_hash(text: str) -> int:
    """``String.hashCode`` (over UTF-16 code units), as a 32-bit unsigned integer."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
    return h


def hashmap_order(keys: Sequence[str]) -> list[str]:
    """The iteration order of a Java ``HashMap`` that got ``keys`` inserted in this order (default capacity 16,
    doubled past a load of 0.75; within a bucket, insertion order)."""
    unique = list(dict.fromkeys(keys))
    capacity = 16
    while len(unique) > capacity * 0.75:
        capacity *= 2

    def bucket(key: str) -> int:
        h = java_string_hash(key)
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(unique, key=bucket)


def java_json(pairs: Sequence[tuple[str, Any]]) -> str:
    """Jackson's compact JSON of a Java ``HashMap`` filled with ``pairs`` in this order (a value that is a list of
    pairs is a nested ``HashMap``)."""
    values = dict(pairs)
    body = ",".join(
        f"{json.dumps(key, ensure_ascii=False)}:"
        + (java_json(values[key]) if isinstance(values[key], list) else json.dumps(values[key], ensure_ascii=False))
        for key in hashmap_order([k for k, _ in pairs])
    )
    return "{" + body + "}"
