"""Prompts follow Appendix H; serializations and options reach them."""

from __future__ import annotations

import pytest

from structbench.benchmarks.scitab import SciTab, prompts
from structbench.benchmarks.scitab.prompts import POT_CODE_LINE, SEPARATOR
from structbench.data.sample import Sample
from structbench.data.serialize import SERIALIZERS
from structbench.datasets import DataContext
from structbench.errors import UsageError

Loaded = tuple[SciTab, dict[str, list[Sample]]]

FIRST_TABLE = """|| Feature | LR P | LR R | LR F1 | SVM P | SVM R | SVM F1 | ANN P | ANN R | ANN F1 ||
|| +BoW | 0.93 | 0.91 | 0.92 | 0.94 | 0.92 | 0.93 | 0.91 | 0.91 | 0.91 ||
|| +BoC (Wiki-PubMed-PMC) | 0.94 | 0.92 | 0.93 | 0.94 | 0.92 | 0.93 | 0.91 | 0.91 | 0.91 ||"""


def test_zero_shot_is_appendix_h1(loaded: Loaded) -> None:
    bench, samples = loaded
    prompt = bench.prompt(samples["all"][0], "zero_shot")
    assert prompt.startswith(
        "Table: Table 1: Performance of supervised learning models with different features.\n" + FIRST_TABLE
    )
    assert prompt.endswith(
        "Claim: The models using BoC outperform models using BoW as well as ASM features.\n"
        "Based on the information in the Table, is the above claim true?\n"
        "A) the claim is true.\nB) the claim is false.\nC) it is impossible to tell."
    )
    two = bench.prompt(samples["2class"][0], "zero_shot")
    assert two.endswith("A) the claim is true.\nB) the claim is false.")


def test_open_model_prompt_is_section_4_1(loaded: Loaded) -> None:
    bench, samples = loaded
    sample = samples["all"][0]
    prompt = bench.prompt(sample, "open_model")
    table, caption, claim, question = prompt.split("\n")
    assert table.startswith(
        "row 1 is : Feature is +BoW ; LR P is 0.93 ; LR R is 0.91 ; LR F1 is 0.92 ; SVM P is 0.94 ; "
    )
    assert " . row 2 is : Feature is +BoC (Wiki-PubMed-PMC) ; LR P is 0.94 ;" in table and table.endswith(" .")
    assert caption == "Table 1: Performance of supervised learning models with different features."
    assert claim == sample.question
    assert question == "Based on the information in the table, is the above claim true? A) True B) False C) Unknown?"
    assert bench.prompt(samples["2class"][0], "open_model").endswith("A) True B) False C) Unknown?")
    markdown = SciTab({"serialization": "markdown"})
    markdown._demos = bench._demos
    assert markdown.prompt(sample, "open_model").startswith("| Feature | LR P |")
    request = bench.request(sample, "open_model")
    assert request.params.max_tokens == 64 and request.params.temperature == 0.0 and request.params.stop == ()
    # answers by letter or by word; the echoed option list says nothing
    from structbench.benchmark import Attempt

    for reply, label in [("A", "supports"), ("B) False", "refutes"), ("Unknown", "not enough info"),
                         ("C", "not enough info"), ("A) True B) False C) Unknown? The answer is B", "refutes"),
                         ("The claim is true.", "supports")]:
        assert bench.score(sample, Attempt(output=reply), "open_model").parsed == label, reply


def test_in_context_and_cot_have_three_held_out_demonstrations(loaded: Loaded) -> None:
    bench, samples = loaded
    sample = samples["all"][5]
    for style, tail in (
        ("in_context", "Please directly give the answer.\nAnswer:"),
        ("cot", "Let us think step by step.\nReasoning:"),
    ):
        prompt = bench.prompt(sample, style)  # type: ignore[arg-type]
        blocks = prompt.split(f"\n{SEPARATOR}\n")
        assert len(blocks) == 4
        assert blocks[0].startswith("Read the following table and then answer a question.\nCaption: Table 4:")
        assert prompt.endswith(tail) and f"Claim: {sample.question}\n" in blocks[3]
    cot = bench.prompt(sample, "cot")
    assert "Answer:\nTherefore, it is impossible to tell." in cot  # the 3-class NEI demonstration
    assert "by 88.64 - 86.69 = 1.95.\nTherefore, the Claim is true.\nAnswer:\nTherefore, the claim is true." in cot
    two = bench.prompt(samples["2class"][5], "in_context")
    assert "impossible" not in two
    assert two.count("Answer:\nThe claim is true.") == 2 and two.count("Answer:\nThe claim is false.") == 1


def test_pot_repeats_its_header_and_ends_with_the_code_line(loaded: Loaded) -> None:
    bench, samples = loaded
    prompt = bench.prompt(samples["2class"][0], "pot")
    blocks = prompt.split(f"\n{SEPARATOR}\n")
    assert len(blocks) == 4
    header = (
        "Read the following table and then write Python code to answer a question:\n"
        "(please call the function equal(a, b) to check whether a and b are equal)\n"
    )
    assert all(b.startswith(header) for b in blocks)
    assert prompt.endswith(
        "Question: Based on the information in the table, is the above claim true or false?\n" + POT_CODE_LINE
    )
    assert "ans = equal(accuracy_drop, 1.95)" in blocks[0]
    request = bench.request(samples["2class"][0], "pot")
    assert request.params.temperature == 0.0 and request.params.stop == (SEPARATOR,)


def test_markdown_serialization_and_kept_markers(shared_data: DataContext) -> None:
    bench = SciTab({"serialization": "markdown", "markup": "keep"})
    sample = bench.load("all", shared_data, seed=0, limit=2)[0]
    zero = bench.prompt(sample, "zero_shot")
    assert "| Feature | LR P |" in zero and "[BOLD] 0.93" in zero and "||" not in zero
    assert zero.count("Table 1: Performance of supervised") == 1
    cot = bench.prompt(sample, "cot")
    assert cot.count("Table 1: Performance of supervised") == 1  # in the Caption: line only


def test_unknown_options_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="serialization"):
        SciTab({"serialization": "markdwon"})
    with pytest.raises(UsageError, match="markup"):
        SciTab({"markup": "bold"})
    with pytest.raises(UsageError, match="load variant"):
        SciTab().demonstrations("all")


@pytest.mark.parametrize("fmt", list(SERIALIZERS))
def test_every_registered_serialization_shows_the_caption_once(loaded: Loaded, fmt: str) -> None:
    base, samples = loaded
    bench = SciTab({"serialization": fmt})
    bench._demos = base._demos  # same markup: the loaded demonstrations apply
    sample = samples["all"][0]
    caption = "Table 1: Performance of supervised learning models with different features."
    for style in ("zero_shot", "in_context", "cot", "pot"):
        prompt = bench.prompt(sample, style)
        assert prompt.count(caption) == 1, (fmt, style)
        assert "0.94" in prompt and "+BoW" in prompt
        assert prompts.style_of(prompt) == style
