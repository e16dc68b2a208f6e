"""Untrusted text (a model's name, a task or category from the data, a sample id, a reply) written into Markdown as
the text it is, never as Markdown or HTML.

``report.md`` and the ``publish`` dataset card are rendered by Markdown renderers that pass raw HTML through (mkdocs,
IDE previews, Jupyter): a model named ``<img src=x onerror=...>`` ran script there, and one holding ``\\r\\n# H
[l](javascript:...)`` added a heading and a link. Every such value goes through here; the documents' own headings,
tables and emphasis are written around it as they are.
"""

from __future__ import annotations

import re

from structbench.core.printable import printable

LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
"""What any renderer may take for the end of a line: each becomes one space."""
INLINE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\\": "\\\\", "|": "\\|", "`": "\\`"})
"""HTML's special characters as entities (no tag, no entity of the text's own); a backslash doubled, so one in the
text never escapes what follows it (``\\|`` stays a backslash and an escaped pipe, not a cell's end); ``|`` escaped
in and out of table cells; a backtick never opens a code span."""
LINK = re.compile(r"\](?=[(\[])")
"""A ``]`` that would close a link's text (``[text](url)``, ``[text][ref]``): escaped, so no link is made."""
BLOCK_START = re.compile(r"[#>+*=~_:\[-]")
"""A first character that makes a line a heading, quote, list item, rule, fence or link definition."""
ORDERED = re.compile(r"(\d{1,9})([.)])")
"""``1.`` or ``1)`` at a line's start: an ordered list item."""


def one_line(text: str) -> str:
    """``text`` with every line break a space, and no other control character (``core.printable``: a report read
    on a terminal carries no escape sequence)."""
    return printable(LINE_BREAK.sub(" ", text))


def md_inline(text: str) -> str:
    """``text`` as Markdown text inside a line (a table cell, a heading's title, a list item's words)."""
    return LINK.sub(r"\\]", one_line(text).translate(INLINE))


def md_block(text: str) -> str:
    """``text`` as a paragraph of its own (or what starts a line): ``md_inline``, and a first character that would
    make it a heading, quote, list or rule escaped (and leading spaces, which would make it code, dropped)."""
    out = md_inline(text).lstrip()
    if BLOCK_START.match(out):
        return "\\" + out
    return ORDERED.sub(r"\1\\\2", out, count=1) if ORDERED.match(out) else out


def md_code(text: str) -> str:
    """``text`` as an inline code span (shown as it is: no HTML, no link), fenced by more backticks than it holds in
    a row; not for a table cell, where a ``|`` in it would end the cell (use ``md_inline`` there)."""
    text = one_line(text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"
