"""The generator: counts, seeds, depth/width control, balanced Syntax, parser cross-check."""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pyexpat import ExpatError, ParserCreate

import pytest
import ryml
import yaml
from lxml import etree

from structbench.benchmarks.structext.generator import GENERATORS, GroundTruthError, Shape, generate
from structbench.benchmarks.structext.generator.verify import VERIFIERS
from structbench.benchmarks.structext.suites import SUITES, _blocks, _shares, suite_items
from structbench.benchmarks.structext.templates import LANGUAGES, TEMPLATES
from structbench.core.forkmap import can_fork


@pytest.fixture(scope="module")
def test_suite() -> list:
    return suite_items("test", seed=0)


def test_suite_counts_match_table_2(test_suite: list) -> None:
    assert len(test_suite) == 3712
    per_template = Counter(i.template for i in test_suite)
    assert set(per_template) == set(TEMPLATES) and set(per_template.values()) == {128}
    assert Counter((i.depth, i.width) for i in test_suite) == {(1, 1): 1856, (2, 1): 1856}
    assert len({i.id for i in test_suite}) == 3712
    assert sum(c.n * 29 for c in SUITES["hard"]) == 2088


def test_same_seed_same_suite_and_other_seed_differs(test_suite: list) -> None:
    again = suite_items("test", seed=0, limit=300)
    assert [(i.id, i.question, i.answer, i.reference) for i in again] == [
        (i.id, i.question, i.answer, i.reference) for i in test_suite[:300]
    ]
    other = suite_items("test", seed=1, limit=300)
    assert sum(a.reference != b.reference for a, b in zip(other, test_suite, strict=False)) > 250


def test_limit_draws_a_spread_sample(test_suite: list) -> None:
    first = suite_items("test", seed=0, limit=8)
    assert [i.template.split(".")[0] for i in first] == list(LANGUAGES)  # one question per language
    assert {i.template for i in suite_items("test", seed=0, limit=29)} == set(TEMPLATES)
    both_depths = suite_items("test", seed=0, limit=58)
    assert Counter((i.template, i.depth) for i in both_depths) == {(t, d): 1 for t in TEMPLATES for d in (1, 2)}
    hard = suite_items("hard", seed=0, limit=29 * 9)
    assert {(i.template, i.depth, i.width) for i in hard} == {
        (t, d, w) for t in TEMPLATES for d in (1, 2, 3) for w in (1, 2, 3)
    }
    # A prefix is the same whatever the limit, and ids name the same question in every order.
    assert [i.id for i in both_depths] == [i.id for i in test_suite[:58]]
    by_id = {i.id: i for i in test_suite}
    assert all(by_id[i.id] == i for i in both_depths)
    assert {i.id for i in first} == {
        "csv.lookup/d1w1/000", "tree.height/d1w1/000", "json.object_by_id/d1w1/000", "yaml.object_by_id/d1w1/000",
        "xml.tag_content/d1w1/000", "markdown.bold/d1w1/000", "latex.bold/d1w1/000", "org.bold/d1w1/000",
    }


@pytest.mark.parametrize(("suite", "limit", "digest"), [
    ("test", 290, "eb44c7f79abd593d6dcc2efb23b0e8e5ee0be9ac07837ef96c148f6c88a7dd79"),
    ("hard", 261, "77552dea4c932642fbd42294f5ee8a82b6f6eedbd08d89a1ce100a295eb6bdfb"),
])
def test_generated_text_is_pinned(suite: str, limit: int, digest: str) -> None:
    """The suites are fixed by their seed: a change here changes every published result (update on purpose only)."""
    h = hashlib.sha256()
    for i in suite_items(suite, seed=0, limit=limit):
        h.update("\x1f".join([i.id, i.question, i.answer, i.reference, i.seed]).encode() + b"\x1e")
    assert h.hexdigest() == digest


def test_worker_processes_do_not_change_the_suite() -> None:
    alone = suite_items("hard", seed=3, workers=1)
    assert suite_items("hard", seed=3, workers=2) == alone
    assert suite_items("hard", seed=3, workers=3) == alone
    assert suite_items("hard", seed=3, workers=2, limit=500) == alone[:500]


@pytest.mark.parametrize("n", [2, 3])
def test_shares_cover_every_block_once_and_leave_children_lighter(n: int) -> None:
    blocks = _blocks("hard")
    shares = _shares(blocks, n, "balanced")
    assert sorted(pos for share in shares for pos in share) == list(range(len(blocks)))
    cost = [sum((Shape(blocks[p][0].depth, blocks[p][0].width).branching + 1) ** blocks[p][0].depth for p in share)
            for share in shares]
    assert all(cost[0] > child for child in cost[1:])  # a child still has to send its questions back
    assert max(cost) < 1.2 * min(cost)


def test_a_generator_bug_in_a_worker_process_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    if not can_fork():
        pytest.skip("forking is not possible here now (another thread is alive)")
    caller = os.getpid()
    check = VERIFIERS["org"]

    def fails_in_workers(qas: list) -> None:
        if os.getpid() != caller:
            raise GroundTruthError("org: planted disagreement")
        check(qas)

    monkeypatch.setitem(VERIFIERS, "org", fails_in_workers)
    assert len(suite_items("test", seed=0, workers=1)) == 3712  # no worker: nothing planted fires
    with pytest.raises(GroundTruthError, match="planted disagreement"):
        suite_items("test", seed=0, workers=2)


def test_syntax_questions_are_balanced_unless_official(test_suite: list) -> None:
    for template in ("json.syntax", "yaml.syntax", "xml.syntax"):
        golds = Counter(i.answer for i in test_suite if i.template == template)
        assert golds == {"True": 64, "False": 64}
    official = suite_items("test", seed=0, syntax="official", limit=900)
    syntax = [i.answer for i in official if i.template.endswith(".syntax")]
    assert len(syntax) > 64 and set(syntax) == {"True"}


@pytest.mark.parametrize(("depth", "width"), [(1, 1), (2, 1), (2, 3), (3, 2)])
def test_depth_and_width_control_the_tree(depth: int, width: int) -> None:
    qas = generate("tree", Shape(depth, width), "shape")
    edges = qas[0].reference.split("\n")
    b = depth * width
    assert len(edges) == sum(b**level for level in range(1, depth + 1))
    assert qas[0].answer == str(depth)
    doc = json.loads(generate("json", Shape(depth, width), "shape")[0].reference)
    assert len(doc["subs"]) == b
    assert all(1 <= len(doc) - 2 <= 6 * depth for doc in [doc, *doc["subs"]])


def test_hard_items_reach_about_100k_characters() -> None:
    qas = generate("json", Shape(3, 3), "big")
    assert 80_000 < len(qas[0].reference) < 200_000


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_a_wrong_answer_is_caught_never_dropped(language: str) -> None:
    for index in range(len(GENERATORS[language](__import__("random").Random(0), Shape(2, 1), True))):
        qas = generate(language, Shape(2, 1), "catch", syntax_error=True)
        qas[index].answer += "x"
        with pytest.raises(GroundTruthError):
            VERIFIERS[language](qas)


def test_broken_texts_are_rejected_by_every_parser() -> None:
    for seed in range(20):
        broken = {
            lang: next(q.reference for q in generate(lang, Shape(2, 2), seed, syntax_error=True)
                       if q.template.endswith("syntax"))
            for lang in ("json", "yaml", "xml")
        }
        with pytest.raises(ValueError):
            json.loads(broken["json"])
        with pytest.raises(yaml.YAMLError):
            yaml.safe_load(broken["yaml"])
        with pytest.raises(ryml.ExceptionParse):
            ryml.parse_in_arena(broken["yaml"].encode())
        with pytest.raises(etree.XMLSyntaxError):
            etree.fromstring(broken["xml"].encode())
        with pytest.raises(ExpatError):
            ParserCreate().Parse(broken["xml"], True)


def test_yaml_reads_the_same_with_pyyaml_and_rapidyaml() -> None:
    from structbench.benchmarks.structext.generator.verify import load_yaml

    for seed in range(10):
        text = generate("yaml", Shape(2, 2), seed)[0].reference
        assert yaml.safe_load(text) == load_yaml(text)


def test_questions_read_like_the_release() -> None:
    qas = {q.template: q for q in generate("json", Shape(1, 1), "words")}
    q = TEMPLATES["json.deepest"].question(**qas["json.deepest"].slots)
    assert q == (
        "What are the most deeply nested objects, i.e., no value of type list or dict?The content should be "
        "an excerpt as they appear in the JSON file, separated by \\n\\n."
    )
    section = next(q for q in generate("markdown", Shape(3, 1), "words") if q.template == "markdown.section")
    assert "th section?" in TEMPLATES["markdown.section"].question(**section.slots)


def test_yaml_excerpts_compare_through_the_emitter() -> None:
    from structbench.benchmarks.structext.generator.verify import EmittedJson

    value = [{"id": "a", "Z": "z", "subs": []}]
    assert EmittedJson('[\n  {\n    "id": "a",\n    "Z": "z",\n    "subs": []\n  }\n]\n') == value  # fast path
    assert EmittedJson('[{"id": "a", "Z": "z", "subs": []}]') == value  # other layout: read and compared
    assert EmittedJson('[{"id": "a", "Z": "y", "subs": []}]') != value
    assert EmittedJson('[\n  {\n    "id": "a",\n    "subs": []\n  }\n]\n') != value


def test_section_reads_headings_anywhere() -> None:
    from structbench.benchmarks.structext.generator.verify import section

    text = "# a\npara\n## c\nmore\n# b\nx"
    assert section("markdown", text, [1]) == "# a\npara\n## c\nmore"
    assert section("markdown", text, [2]) == "# b\nx"
    assert section("markdown", text, [1, 1]) == "## c\nmore"
    assert section("markdown", text, [2, 1]).startswith("<no 1th heading")
    latex = "root\np\n\\section{a}\nq\n\\subsection{b}\nr\n\\section{c}\ns"
    assert section("latex", latex, [1, 1]) == "\\subsection{b}\nr"
    assert section("latex", latex, [2]) == "\\section{c}\ns"


def test_tree_check_does_not_rely_on_edge_order() -> None:
    qas = generate("tree", Shape(3, 1), "order")
    lines = qas[0].reference.split("\n")
    shuffled = "\n".join(lines[::-1])
    for qa in qas:
        qa.reference = shuffled
    VERIFIERS["tree"](qas)
    qas[2].answer = qas[2].answer.rsplit("->", 1)[0]
    with pytest.raises(GroundTruthError):
        VERIFIERS["tree"](qas)


def test_verifiers_reject_mismatched_documents() -> None:
    qas = generate("json", Shape(2, 1), "mixed")
    other = generate("json", Shape(2, 1), "other")
    qas[3] = other[3]  # an access-path question about another document
    with pytest.raises(GroundTruthError):
        VERIFIERS["json"](qas)
    with pytest.raises(GroundTruthError):
        VERIFIERS["yaml"](generate("yaml", Shape(1, 1), "few")[:4])
