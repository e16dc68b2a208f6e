"""``core.mdtext``: untrusted text written into Markdown stays text, as a Markdown renderer that passes HTML through
renders it (markdown-it, CommonMark with GFM tables, as mkdocs-like renderers and IDE previews do)."""

from __future__ import annotations

from markdown_it import MarkdownIt

from structbench.core.mdtext import md_block, md_code, md_inline

NASTY = ("<img src=x onerror=alert(1)>&amp;\r\n# H [l](javascript:alert(1)) [r][1] a\\|b\\\\|c `x` \u2028"
         "## two\u2029> q\r- item")


def html(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def test_inline_text_in_a_table_cell_is_one_cell_of_text() -> None:
    out = html(f"| a | b |\n|---|---|\n| {md_inline(NASTY)} | end |\n")
    assert "<img" not in out and "<a " not in out and "<h" not in out.replace("<thead>", "")
    assert out.count("<td>") == 2 and "<td>end</td>" in out  # neither a pipe nor a line break ended the cell
    assert "&lt;img src=x onerror=alert(1)&gt;&amp;amp;" in out  # shown as written
    assert "a\\|b\\\\|c" in out and "[l](javascript:alert(1))" in out


def test_a_block_is_one_paragraph_and_a_code_span_one_span() -> None:
    for start in ("# h", "> q", "- i", "1. i", "    code", "[x]: /u", "---", "==="):
        out = html(f"para\n\n{md_block(start + ' ' + NASTY)}\n")
        assert out.count("<p>") == 2 and "<h" not in out and "<li" not in out and "<pre" not in out, start
        assert "<img" not in out and "<a " not in out and "<blockquote" not in out
    code = html(md_code("a `` b <img src=x> [l](javascript:x)\r\n# H"))
    assert code.count("<code>") == 1 and "<img" not in code and "<a " not in code and "<h1" not in code
