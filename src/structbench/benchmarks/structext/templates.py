"""The 8 languages and 29 question templates of StrucText-Eval, worded as in the official release.

Each template is one ``(language, index)`` slot of the official generator: the index is the ``_N``
suffix of the released file names and the line of ``Generation/RuleHint.txt`` its hint comes from.
The question text is split into the paper's "Question" and "Requirement" parts (Fig. 8, Tables 7-10);
``Template.question`` joins them back exactly as the released ``Question`` field reads.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    """A structured language: its release name (``typename``) and the name prompts show."""

    name: str
    """As in the release's ``Label.typename`` (lower case)."""
    display: str
    """As the paper writes it (JSON, LaTeX, Org ...)."""


LANGUAGES: dict[str, Language] = {
    lang.name: lang
    for lang in (
        Language("csv", "CSV"),
        Language("tree", "Tree"),
        Language("json", "JSON"),
        Language("yaml", "YAML"),
        Language("xml", "XML"),
        Language("markdown", "Markdown"),
        Language("latex", "LaTeX"),
        Language("org", "Org"),
    )
}
"""In the order of ``Generation/RuleHint.txt`` (CSV, Tree, JSON, YAML, XML, Markdown, LaTeX, ORG)."""


@dataclass(frozen=True)
class Template:
    """One of the 29 question templates."""

    id: str
    """``<language>.<name>``, e.g. ``json.access_path``."""
    language: str
    index: int
    """The template's slot in its language (the ``_N`` file suffix)."""
    task: str
    """The official task label (``other_label_list[0]``), e.g. ``PathCompose``."""
    ask: str
    """The question proper, with ``{placeholders}``."""
    requirement: str = ""
    """The answer-format requirement appended to the question (empty: the paper prints "None")."""
    glue: str = " "
    """What joins ``ask`` and ``requirement`` in the release (one template has no space)."""

    def question(self, **slots: object) -> str:
        """The full question text, as the release's ``Question`` field."""
        ask = self.ask.format(**slots)
        return f"{ask}{self.glue}{self.requirement}" if self.requirement else ask

    def split(self, question: str) -> tuple[str, str]:
        """``(ask, requirement)`` of a released question of this template."""
        tail = f"{self.glue}{self.requirement}"
        if self.requirement and question.endswith(tail):
            return question[: -len(tail)], self.requirement
        return question, ""


_SYNTAX_REQ = "If so, give the answer 'True' and spot them out. If it is free from error, just give the answer 'False'."
_SECTION_ASK = "What is the content of {path}?"


def _section_req(lang: str) -> str:
    return (
        f"The content should be an excerpt as it appears in the {lang} file, including the heading line "
        "and any sub-section."
    )


def _objects(lang: str, display: str) -> list[Template]:
    return [
        Template(
            f"{lang}.object_by_id", lang, 0, "TextRetrieval", "What is the object with id {id}?",
            f"The content should be an excerpt as it appears in the {display} file.",
        ),
        Template(f"{lang}.first_sub_id", lang, 1, "PathWalk", "What is the first object's id of subs?"),
        Template(f"{lang}.syntax", lang, 2, "Syntax", f"Is there any structural error in this {display}?", _SYNTAX_REQ),
        Template(
            f"{lang}.access_path", lang, 3, "PathCompose", 'How to access value "{value}"?',
            "Answer should be like obj[key or index 1][key or index 2][key or index 3]...",
        ),
        Template(
            f"{lang}.deepest", lang, 4, "TextRetrieval",
            "What are the most deeply nested objects, i.e., no value of type list or dict?",
            f"The content should be an excerpt as they appear in the {display} file, separated by \\n\\n.",
            glue="",
        ),
    ]


def _markup(lang: str, file_word: str, figure_word: str) -> list[Template]:
    return [
        Template(f"{lang}.bold", lang, 0, "TextRetrieval", "Extract all bold texts.",
                 "Print those raw texts separated by \\n."),
        Template(f"{lang}.section", lang, 1, "PathWalk", _SECTION_ASK, _section_req(file_word)),
        Template(f"{lang}.images", lang, 2, "TextRetrieval", f"Extract all included {figure_word} files.",
                 "Print those file names separated by \\n."),
    ]


_ALL: list[Template] = [
    Template("csv.lookup", "csv", 0, "TextRetrieval", "What is the {field} of record with primeKey {key}"),
    Template("csv.salary", "csv", 1, "Statistics", "How many people work with salary more than {threshold}?"),
    Template("csv.gender", "csv", 2, "Statistics", "How many people are {gender}?"),
    Template("csv.join", "csv", 3, "Join", "How many people who work in {state} are taller than {height}?"),
    Template(
        "tree.height", "tree", 0, "Tree.Height",
        "What is the height of the root node, i.e., the number of edges in the longest path from root node "
        "to any leaf nodes?",
        "Answer an integer, leaf is of height 0.",
    ),
    Template("tree.depth", "tree", 1, "Tree.Depth", "What is the depth of node {node}?",
             "Answer an integer, root is of depth 0."),
    Template("tree.path", "tree", 2, "PathCompose", "What is the path from the root node to the node {node}.",
             "Answer should look like A->D->H."),
    *_objects("json", "JSON"),
    *_objects("yaml", "YAML"),
    Template("xml.tag_content", "xml", 0, "TextRetrieval", "What is the content of tag {tag}?",
             "The content should be an excerpt as it appears in the XML file."),
    Template("xml.tag_by_attr", "xml", 1, "TextRetrieval", "What is the tag with attribute of value {value}?"),
    Template("xml.syntax", "xml", 2, "Syntax", "Is there any structural error in this XML?", _SYNTAX_REQ),
    *_markup("markdown", "markdown", "image"),
    *_markup("latex", "LaTeX", "figure"),
    *_markup("org", "org", "image"),
]

TEMPLATES: dict[str, Template] = {t.id: t for t in _ALL}
"""All 29 templates by id, in release order (language, then index)."""

BY_SLOT: dict[tuple[str, int], Template] = {(t.language, t.index): t for t in _ALL}
"""Templates by ``(language, index)``, the key of a released file."""

TASKS: tuple[str, ...] = tuple(dict.fromkeys(t.task for t in _ALL))
"""The official task labels."""


def templates_of(language: str) -> list[Template]:
    """The templates of one language, in slot order."""
    return [t for t in _ALL if t.language == language]


def section_path(indices: list[int]) -> str:
    """The release's wording for a heading path: ``2th subsection under 1th section`` ("th" as released)."""
    names = ("section", "subsection", "subsubsection", "subsubsubsection")
    parts = [f"{i}th {names[level]}" for level, i in enumerate(indices)]
    return " under ".join(reversed(parts))


assert len(TEMPLATES) == 29
assert [len(templates_of(lang)) for lang in LANGUAGES] == [4, 3, 5, 5, 3, 3, 3, 3]
