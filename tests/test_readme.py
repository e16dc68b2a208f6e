"""The README is the front page: short, and every link in it resolves (the rest lives in docs/)."""

from __future__ import annotations

import re
from pathlib import Path

from structbench.benchmarks import BUILTIN
from structbench.tools.catalog import FILES, main, stale

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


GENERATED = re.compile(r"<!-- begin: (\w+) -->.*?<!-- end: \1 -->", re.S)
"""The catalog's blocks (a row and a citation per benchmark): adding a benchmark grows them, not the prose."""


def test_readme_is_a_front_page() -> None:
    text = README.read_text()
    prose = GENERATED.sub("", text)
    assert len(prose) < 9_500, f"README.md has {len(prose)} characters outside the catalog; move detail into docs/"
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


def test_the_benchmark_tables_and_citations_are_the_registrys() -> None:
    """The README's and the docs' benchmark tables and the citations are generated from the registry and each
    benchmark's ``title``, ``summary``, ``paper`` and ``headline_label`` (``python -m structbench.tools.catalog``)."""
    assert stale(REPO) == [], "run python -m structbench.tools.catalog, then review the diff"
    text = README.read_text()
    for name in BUILTIN:
        assert f"| `{name}` | [" in text and f"(docs/benchmarks/{name}.md)" in text


def test_the_catalog_finds_a_stale_table(tmp_path: Path) -> None:
    for rel in FILES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text((REPO / rel).read_text())
    assert main(["--root", str(tmp_path)]) == 0 and stale(tmp_path) == []
    readme = tmp_path / "README.md"
    fresh = readme.read_text()
    readme.write_text(fresh.replace(f"| `{BUILTIN[0]}` |", "| `renamed` |"))
    assert stale(tmp_path) == ["README.md: block benchmarks"]
    assert main(["--root", str(tmp_path), "--check"]) == 1
    assert main(["--root", str(tmp_path)]) == 0 and stale(tmp_path) == [] and readme.read_text() == fresh


NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
           "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
COUNT = re.compile(rf"\b({'|'.join(NUMBERS)}|\d+) benchmarks\b", re.I)


def test_no_page_counts_the_benchmarks_wrong() -> None:
    """Prose that counts the benchmarks ("all N benchmarks") counts the registry's, so adding one cannot leave a
    stale count behind; prose that needs no count says "every benchmark"."""
    pages = [README, REPO / "mkdocs.yml", *sorted((REPO / "docs").rglob("*.md"))]
    wrong = [
        f"{page.relative_to(REPO)}: {match.group(0)!r}"
        for page in pages
        for match in COUNT.finditer(page.read_text())
        if match.group(1).lower() not in (str(len(BUILTIN)), NUMBERS[len(BUILTIN)] if len(BUILTIN) < 21 else "")
    ]
    assert not wrong, f"the registry has {len(BUILTIN)} benchmarks: " + "; ".join(wrong)
