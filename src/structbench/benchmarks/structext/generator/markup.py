"""Markup languages (Markdown, LaTeX, Org): a heading tree with a paragraph under every heading.

As in the release, the first line is the root's name and its paragraph follows; every other node is a
heading line at its depth (``#``/``\\section``/``*`` for depth 1) followed by one paragraph of
``6 * depth`` filler words into which bold texts and included images are spliced at random character
positions. The release writes depth-2 LaTeX headings as ``\\section`` (one level off); here depth ``k``
is ``\\sub...section`` with ``k - 1`` "sub"s.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import compress
from operator import add, or_
from random import Random

from structbench.benchmarks.structext.generator.common import QA, WORDS, Shape
from structbench.benchmarks.structext.generator.naming import UP
from structbench.benchmarks.structext.generator.topology import topology
from structbench.benchmarks.structext.templates import section_path

IMAGE_EXTENSIONS = ("png", "jpg", "jpeg", "gif")
SPLICE_PROBABILITY = 0.4
"""Chance that a paragraph gets a bold text, and (independently) an image."""


def _latex_heading(level: int) -> tuple[str, str]:
    return ("\\paragraph{", "}") if level == 4 else ("\\" + "sub" * (level - 1) + "section{", "}")


@dataclass(frozen=True)
class Markup:
    """How one markup language writes a heading (around its name), a bold text and an included image."""

    heading: tuple[str, str] | None
    """``(before, after)`` the name of a depth-1 heading, the mark repeated per level; None: LaTeX commands."""
    bold: tuple[str, str]
    image: tuple[str, str]

    def around(self, level: int) -> tuple[str, str]:
        """What is written before and after a name to make it a heading of ``level`` (0: the bare root)."""
        if not level:
            return "", ""
        if self.heading is None:
            return _latex_heading(level)
        return self.heading[0] * level + " ", self.heading[1]


MARKUPS: dict[str, Markup] = {
    "markdown": Markup(heading=("#", ""), bold=("**", "**"), image=("![alt](", ' "hover text")')),
    "latex": Markup(heading=None, bold=("\\textbf{", "}"),
                    image=("\\includegraphics[width=0.5\\textwidth]{", "}")),
    "org": Markup(heading=("*", ""), bold=("*", "*"), image=("[[", "]]")),
}


@cache
def _affixes(lang: str, branching: int, depth: int) -> tuple[list[str], list[str]]:
    """What comes before and after each node's name on its heading line, in pre-order."""
    pairs = [MARKUPS[lang].around(level) for level in topology(branching, depth).levels]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def generate_markup(lang: str, rng: Random, shape: Shape) -> list[QA]:
    """The three questions (bold texts, section content, images) about one document."""
    style = MARKUPS[lang]
    b, depth = shape.branching, shape.depth
    total = topology(b, depth).total
    name_off = rng.randrange(26)
    names = UP.upto(name_off + 2 * total + 26)
    base = [rng.choice(WORDS) for _ in range(shape.span)]
    tail = " " + " ".join(base[1:]) if len(base) > 1 else ""
    word_off = rng.randrange(26)
    draw = rng.random
    with_bold = [draw() < SPLICE_PROBABILITY for _ in range(total)]
    with_image = [draw() < SPLICE_PROBABILITY for _ in range(total)]
    if not any(with_bold):
        with_bold[rng.randrange(total)] = True
    if not any(with_image):
        with_image[rng.randrange(total)] = True
    before, after = _affixes(lang, b, depth)
    headings = list(map(add, map(add, before, names[name_off : name_off + total]), after))
    firsts = [word + tail for word in WORDS]
    paragraphs = ((firsts[word_off:] + firsts[:word_off]) * (total // 26 + 1))[:total]
    bold_open, bold_close = style.bold
    image_open, image_close = style.image
    extensions = ["." + ext for ext in IMAGE_EXTENSIONS]
    bolds: list[str] = []
    images: list[str] = []
    add_bold, add_image, words = bolds.append, images.append, WORDS
    image_no = name_off + total
    for i in compress(range(total), map(or_, with_bold, with_image)):
        text = paragraphs[i]
        room = len(text) + 1
        if with_bold[i]:
            bold = words[int(draw() * 26)]
            if draw() >= 0.5:
                bold += " " + words[int(draw() * 26)]
            at = int(draw() * room)
            add_bold(bold)
            bold = bold_open + bold + bold_close
            if with_image[i]:
                file = names[image_no] + extensions[int(draw() * 4)]
                image_no += 1
                add_image(file)
                at_image = int(draw() * room)
                image = image_open + file + image_close
                if at <= at_image:  # the release inserts at sorted positions, the bold first on a tie
                    paragraphs[i] = text[:at] + bold + text[at:at_image] + image + text[at_image:]
                else:
                    paragraphs[i] = text[:at_image] + image + text[at_image:at] + bold + text[at:]
            else:
                paragraphs[i] = text[:at] + bold + text[at:]
        else:
            file = names[image_no] + extensions[int(draw() * 4)]
            image_no += 1
            add_image(file)
            at = int(draw() * room)
            paragraphs[i] = text[:at] + image_open + file + image_close + text[at:]
    lines = headings + paragraphs
    lines[0::2], lines[1::2] = headings, paragraphs
    text = "\n".join(lines)
    level = rng.randint(1, depth)
    path = [rng.randrange(b) for _ in range(level)]
    sizes = [sum(b**k for k in range(depth - lv + 1)) for lv in range(depth + 1)]  # subtree size per level
    start = sum(1 + j * sizes[lv] for lv, j in enumerate(path, start=1))  # the pre-order index of `path`
    excerpt = "\n".join(lines[2 * start : 2 * (start + sizes[level])])
    indices = [i + 1 for i in path]
    return [
        QA(f"{lang}.bold", {}, "\n".join(bolds), text),
        QA(f"{lang}.section", {"path": section_path(indices)}, excerpt, text, facts={"indices": indices}),
        QA(f"{lang}.images", {}, "\n".join(images), text),
    ]
