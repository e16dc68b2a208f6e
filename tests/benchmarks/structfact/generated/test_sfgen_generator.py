"""Generated sets: every label re-derived by the independent check, the paper's tasks, labels and categories,
the release's fields, the evidence budget, order invariance, and determinism."""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest

from structbench.backends.tokens import token_counter
from structbench.benchmarks.structfact.evidence import parse_evidence
from structbench.benchmarks.structfact.generated import generator
from structbench.benchmarks.structfact.generated.generator import (
    PAPER_COUNTS,
    Generator,
    Question,
    label_counts,
)
from structbench.benchmarks.structfact.generated.profile import World
from structbench.benchmarks.structfact.generated.templates import TASKS
from structbench.benchmarks.structfact.generated.verify import verify
from structbench.benchmarks.structfact.generated.views import pipe_table
from structbench.benchmarks.structfact.loader import LABELS, record_to_sample
from structbench.benchmarks.structfact.options import StructFactOptions
from structbench.benchmarks.structfact.prompts import Prompter
from structbench.core import forkmap
from structbench.data.evidence import Graph, ItemList, StructuredText, Table, Text

CATEGORIES = {
    "Arithmetic Calculation": {"Numerical Matching", "Numerical Comparison", "Computational Analysis"},
    "Spatiotemporal Cognition": {"Temporal", "Spatial", "Spatiotemporal"},
    "Multi-hop Reasoning": {"1-hop", "2-hop", "3-hop", "4-hop"},
    "Composition Understanding": {"Complex Structures", "Missing Values", "Incomplete Descriptions"},
    "Combining Structural and Unstructural": {"Text Fact", "Table + Text"},
}


def records(questions: list[Question]) -> list[dict[str, Any]]:
    """The questions as they are saved and shared: through JSON."""
    data: list[dict[str, Any]] = json.loads(json.dumps([q.record() for q in questions]))
    return data


def test_label_counts_follow_the_weights() -> None:
    assert label_counts(600, PAPER_COUNTS["Arithmetic Calculation"]) == [315, 270, 15]
    assert label_counts(10, (1, 1, 1)) == [4, 3, 3]
    assert sum(label_counts(7, (683, 925, 24))) == 7


@pytest.mark.shared
def test_every_label_re_derived_by_the_independent_check(
    rfqa_questions: list[Question], scitab_questions: list[Question]
) -> None:
    checked = 0
    for record in records(rfqa_questions) + records(scitab_questions):
        assert verify(record["EVIDENCE"], record["QUERY"]) == record["LABEL"], record["QUESTION"]
        checked += 1
    assert checked >= 3000 + 800


@pytest.mark.shared
def test_labels_depend_on_the_evidence(rfqa_questions: list[Question]) -> None:
    """Without evidence nothing is known; with the table rows shuffled nothing changes."""
    rng = random.Random(0)
    for record in records(rfqa_questions)[:1500]:
        assert verify([], record["QUERY"]) == "NOT SURE ENOUGH"
        assert verify(shuffled(record["EVIDENCE"], rng), record["QUERY"]) == record["LABEL"], record["QUESTION"]


def shuffled(evidence: list[str], rng: random.Random) -> list[str]:
    """The evidence with the rows of every table, items of every list and triples of every graph permuted."""
    out = []
    for text in evidence:
        for piece in parse_evidence(text):
            if isinstance(piece, Table):
                rows = rng.sample(piece.rows, len(piece.rows))
                if any(piece.header):
                    out.append(f"### {piece.caption}\n{pipe_table(piece.header, rows)}")
                else:
                    body = "\n".join(f"| {k} | {v} |" for k, v in rows)
                    out.append(f"| {piece.caption} |\n| --- | --- |\n{body}")
            elif isinstance(piece, ItemList):
                items = "\n".join(f"* {item}" for item in rng.sample(piece.items, len(piece.items)))
                out.append(f"### {piece.title}\n{items}")
            elif isinstance(piece, Graph):
                out.append("\n".join(f"({s}, {r}, {o})" for s, r, o in rng.sample(piece.triples, len(piece.triples))))
            else:
                assert isinstance(piece, Text)
                out.append(piece.text)
    return out


@pytest.mark.shared
def test_wrong_constants_flip_yes_to_no(rfqa_questions: list[Question]) -> None:
    flipped = 0
    for record in records(rfqa_questions):
        query = record["QUERY"]
        if record["LABEL"] != "YES" or query["op"] != "compare" or query["cmp"] != "=" or query["kind"] != "number":
            continue
        if query["right"]["op"] != "const":
            continue
        query["right"]["value"] += 1000 * (query["tol"] + 1)
        assert verify(record["EVIDENCE"], query) == "NO", record["QUESTION"]
        flipped += 1
    assert flipped > 100


@pytest.mark.shared
def test_tasks_labels_and_categories_follow_the_paper(rfqa_questions: list[Question]) -> None:
    by_task = Counter(q.task for q in rfqa_questions)
    assert by_task == dict.fromkeys(TASKS, 600)
    for task in TASKS:
        labels = Counter(q.label for q in rfqa_questions if q.task == task)
        assert [labels[label] for label in LABELS] == label_counts(600, PAPER_COUNTS[task])
        assert {q.difficulty for q in rfqa_questions if q.task == task} >= CATEGORIES[task]
    assert [q.task for q in rfqa_questions[:5]] == list(TASKS)  # interleaved, so --limit takes every task
    assert len({q.id for q in rfqa_questions}) == len(rfqa_questions)


@pytest.mark.shared
def test_balanced_mix_on_scitab(scitab_questions: list[Question]) -> None:
    tasks = {q.task for q in scitab_questions}
    assert "Spatiotemporal Cognition" not in tasks  # scientific results tables have no dates or places
    assert len(tasks) == 4
    for task in tasks:
        labels = Counter(q.label for q in scitab_questions if q.task == task)
        assert sorted(labels.values()) == [66, 67, 67]
    assert {q.source for q in scitab_questions} == {"scitab"}


@pytest.mark.shared
def test_records_have_the_release_fields_and_load_as_samples(rfqa_questions: list[Question]) -> None:
    demo_fields = ["CHALLENGE", "LABEL", "QUESTION", "EVIDENCE"]
    kinds: Counter[str] = Counter()
    structures: set[str] = set()
    for i, record in enumerate(records(rfqa_questions)):
        assert list(record)[:4] == demo_fields
        assert record["SOURCE"].startswith("rfqa/")
        assert ("NEW_EVIDENCE" in record) == (record["CHALLENGE"] == "Combining Structural and Unstructural")
        sample = record_to_sample(record, record["ID"], "generated", f"record {i}", 0)
        assert sample.meta["difficulty"] == record["DIFFICULTY"]
        assert not any(isinstance(p, StructuredText) for p in sample.evidence)  # every table parses
        kinds.update(p.kind for p in sample.evidence)
        structures.add(sample.meta["structure"])
    assert set(kinds) == {"table", "list", "graph", "text"}
    assert len(structures) >= 4


@pytest.mark.shared
def test_evidence_fits_the_papers_budget_and_is_never_cut(rfqa_questions: list[Question]) -> None:
    prompter = Prompter(StructFactOptions())
    counter = token_counter("regex")
    longest = 0
    for i, record in enumerate(records(rfqa_questions)):
        sample = record_to_sample(record, record["ID"], "generated", f"record {i}", 0)
        data = prompter.evidence(sample)
        assert not data.truncated
        longest = max(longest, counter.count(data.text))
    assert 300 < longest <= 2500


@pytest.mark.shared
def test_same_seed_same_questions(rfqa_world: World, rfqa_questions: list[Question]) -> None:
    """A new generator with the same seed makes the same questions: the first 300 of the 3,000 (every task's first 60;
    each question is seeded on its own, by task and index, so these stand for the rest)."""
    again = list(itertools.islice(Generator(rfqa_world, token_counter("regex")).stream(600, seed=0, first=300), 300))
    assert records(again) == records(rfqa_questions[:300])
    other = Generator(rfqa_world, token_counter("regex")).generate(20, seed=1)
    assert {q.question for q in other}.isdisjoint({q.question for q in rfqa_questions[:100]})


def test_drafting_in_forked_children_makes_the_same_questions_in_the_same_order(atlas_world: World) -> None:
    """``export`` drafts the questions a chunk at a time in forked children (``forkmap.forking``): the same questions
    in the same order as one at a time here, across chunk boundaries."""
    here = Generator(atlas_world, token_counter("regex")).generate(70, "balanced", seed=3)
    with patch.object(generator, "CHUNK", 16), forkmap.forking(2):
        forked = Generator(atlas_world, token_counter("regex")).generate(70, "balanced", seed=3)
    assert records(forked) == records(here)
    assert len(here) > 16 * len(TASKS)


def test_csv_folder_makes_every_task(atlas_world: World, tmp_path: Path) -> None:
    questions = Generator(atlas_world, token_counter("regex")).generate(60, "balanced", seed=5)
    assert {q.task for q in questions} == set(TASKS)
    assert {q.label for q in questions} == set(LABELS)
    for record in records(questions):
        assert verify(record["EVIDENCE"], record["QUERY"]) == record["LABEL"]
    assert {q.source for q in questions} == {"csv/atlas"}


def test_a_reader_of_the_first_questions_gets_them_drafted_in_small_chunks(atlas_world: World) -> None:
    """``export -n 250`` reads 250 questions: its children draft 50 of each task's at a time, not ``CHUNK`` (500);
    ``export -n 10`` wants too few to fork for (``DRAFTED_HERE``): they are drafted here, one at a time. Either way
    they are the questions drafted one at a time here."""
    import itertools

    here = Generator(atlas_world, token_counter("regex")).generate(70, "balanced", seed=3)
    imap = generator.fork_imap

    def read(first: int) -> tuple[list[Any], list[int], set[int | None]]:
        sizes: list[int] = []
        children: set[int | None] = set()

        def counting(work: Any, shares: Any, given: int | None = None) -> Any:
            children.add(given)
            for chunk in imap(work, shares, given):
                sizes.append(len(chunk))
                yield chunk

        with patch.object(generator, "fork_imap", counting), forkmap.forking(2):
            stream = Generator(atlas_world, token_counter("regex")).stream(70, "balanced", seed=3, first=first)
            questions = list(itertools.islice(stream, first))
            stream.close()
        return questions, sizes, children

    many, sizes, children = read(250)
    assert generator.DRAFTED_HERE < 250 and children == {None}  # forked, ``ahead()`` children
    assert records(many) == records(here[:250]) and max(sizes) == -(-250 // len(TASKS))
    few, sizes, children = read(10)
    assert children == {0} and set(sizes) == {1}
    assert records(few) == records(here[:10])
