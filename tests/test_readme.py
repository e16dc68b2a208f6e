"""The README is the front page: short, and every link in it resolves (the rest lives in docs/)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    """Heading anchors of a Markdown page, as the site's slugify makes them (lower case, words and hyphens)."""
    anchors, fenced = set(), False
    for line in page.read_text().splitlines():
        fenced ^= line.startswith("```")
        if not fenced and line.startswith("#"):
            text = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().replace("`", "").lower())
            anchors.add(text.replace(" ", "-"))
    return anchors


def test_readme_is_a_front_page() -> None:
    text = README.read_text()
    assert len(text) < 12_000, f"README.md has {len(text)} characters; move detail into docs/"
    for section in ("## Install", "## Quickstart", "## Benchmarks", "## Command line", "## Citing"):
        assert section in text


def test_every_readme_link_resolves() -> None:
    links = LINK.findall(README.read_text())
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert len(local) >= 15
    for link in local:
        path, _, anchor = link.partition("#")
        target = (README.parent / path).resolve() if path else README
        assert target.is_file(), f"README.md links to {link}: no such file"
        if anchor:
            assert anchor in _anchors(target), f"README.md links to {link}: no such heading"


def test_every_benchmark_has_a_page_linked_from_the_readme() -> None:
    text = README.read_text()
    builtin = sorted(p.parent.name for p in (REPO / "src" / "structbench" / "benchmarks").glob("*/__init__.py"))
    assert len(builtin) == 5
    for name in builtin:
        assert f"| `{name}` | [" in text and (REPO / "docs" / "benchmarks" / f"{name}.md").is_file()
