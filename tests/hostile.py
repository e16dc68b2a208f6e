"""A run directory whose names were written by someone hostile: a model name holding HTML, line breaks, a heading,
a link, a pipe after a backslash, shell commands, terminal escape sequences and rich markup, as a crafted (or
imported) run's files may hold them. Made by the real runner (the toy benchmark, a mock model right on every
sample)."""

from __future__ import annotations

import re
from pathlib import Path

from markdown_it import MarkdownIt

from structbench.backends.base import Request
from structbench.backends.current import current_sample
from structbench.backends.mock import MockBackend
from structbench.data.datasets import DataContext
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.run import Run
from structbench.runner.selection import prepare
from toybench import ToyBench  # noqa: F401  (importing it registers ``toy``)

HOSTILE = ("mock:<img src=x onerror=alert(1)>\r\n# H [l](javascript:alert(1)) a\\|b\u2028"
           "; touch /tmp/PWNED #\x1b]0;title\x07\x1b]8;;http://evil/\x1b\\link\x9b31m [link=http://evil/]x[/link]")
"""The model's name."""


def hostile_run(root: Path, *, base_url: str | None = None) -> Path:
    """A finished run ``root/hostile`` of ``HOSTILE`` (the toy benchmark, six samples)."""

    def reply(request: Request) -> str:
        return current_sample.get().oracle(request)

    config = RunConfig(model=HOSTILE, benches=["toy"], strategies=["direct"], limit=6, base_url=base_url)
    run_dir = root / "hostile"
    Run(run_dir, config).execute(MockBackend(reply=reply, model=HOSTILE), prepare(config, DataContext(offline=True)),
                                 cache=None, concurrency=2, progress=False)
    return run_dir


def checked_markdown(markdown: str, *, headings: int = 1) -> str:
    """The HTML ``markdown`` renders to (markdown-it, CommonMark with GFM tables, HTML passed through as mkdocs-like
    renderers do), checked: no tag, link or heading from ``HOSTILE`` (the document's own ``headings``
    level-1 headings only), no table row split by it, its text shown."""
    out = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    assert "<img" not in out and "<a " not in out
    assert not re.search(r"<h\d>H\b", out) and out.count("<h1>") == headings
    for table in re.findall(r"<table>.*?</table>", out, re.S):
        widths = {row.count("<td") + row.count("<th") for row in re.findall(r"<tr>.*?</tr>", table, re.S)}
        assert len(widths) == 1, table  # no pipe in a name split a cell
    assert "&lt;img src=x onerror=alert(1)&gt;" in out  # the name is shown, as text
    return out


def no_escapes(text: str) -> None:
    """Assert ``text`` holds no escape sequence of ``HOSTILE`` (OSC title or link, BEL, C1 CSI, carriage return)."""
    assert "\x1b]" not in text and "\x07" not in text and "\x9b" not in text and "\r" not in text
