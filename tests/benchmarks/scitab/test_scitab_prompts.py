"""Prompts follow Appendix H; serializations and options reach them.

The prompts are checked to the character on the synthetic release (``tests/synthetic/scitab``: invented
tables and claims in the release's format, with its cell markers); the real release is read by
``test_scitab_data`` and run end to end by ``test_scitab_oracle``.
"""

from __future__ import annotations

import pytest

from structbench.benchmarks.scitab import SciTab, prompts
from structbench.benchmarks.scitab.prompts import POT_CODE_LINE, SEPARATOR
from structbench.core.errors import UsageError
from structbench.data.sample import Sample
from structbench.data.serialize import SERIALIZERS
from synthetic_releases import synthetic_context

Loaded = tuple[SciTab, dict[str, list[Sample]]]

CAPTION = "Table 1: Mean absolute error (cm) of tide forecasts on three synthetic harbours."
"""The first test claim's caption ("[ITALIC] " stripped)."""
FIRST_TABLE = """|| Model | Harrowgate | Cobble Quay | Gullcliff | Avg. ||
|| Persistence | 14.2 | 11.9 | 16.4 | 14.2 ||
|| Harmonic | 9.8 | 8.1 |  | 9.0 ||
|| TideNet (ours) | 6.3 | 5.9 | 7.7 | 6.6 ||"""
"""Its table in the paper's rendering: "[BOLD] " stripped, "[EMPTY]" an empty cell."""


def test_zero_shot_is_appendix_h1(synthetic_loaded: Loaded) -> None:
    bench, samples = synthetic_loaded
    prompt = bench.prompt(samples["all"][0], "zero_shot")
    assert prompt.startswith(f"Table: {CAPTION}\n{FIRST_TABLE}\n")
    assert prompt.endswith(
        "Claim: TideNet has the lowest average error of the three models.\n"
        "Based on the information in the Table, is the above claim true?\n"
        "A) the claim is true.\nB) the claim is false.\nC) it is impossible to tell."
    )
    two = bench.prompt(samples["2class"][0], "zero_shot")
    assert two.endswith("A) the claim is true.\nB) the claim is false.")


def test_open_model_prompt_is_section_4_1(synthetic_loaded: Loaded) -> None:
    bench, samples = synthetic_loaded
    sample = samples["all"][0]
    prompt = bench.prompt(sample, "open_model")
    table, caption, claim, question = prompt.split("\n")
    assert table == (
        "row 1 is : Model is Persistence ; Harrowgate is 14.2 ; Cobble Quay is 11.9 ; Gullcliff is 16.4 ; "
        "Avg. is 14.2 . row 2 is : Model is Harmonic ; Harrowgate is 9.8 ; Cobble Quay is 8.1 ; Gullcliff is  ; "
        "Avg. is 9.0 . row 3 is : Model is TideNet (ours) ; Harrowgate is 6.3 ; Cobble Quay is 5.9 ; "
        "Gullcliff is 7.7 ; Avg. is 6.6 ."
    )
    assert caption == CAPTION
    assert claim == sample.question
    assert question == "Based on the information in the table, is the above claim true? A) True B) False C) Unknown?"
    assert bench.prompt(samples["2class"][0], "open_model").endswith("A) True B) False C) Unknown?")
    markdown = SciTab({"serialization": "markdown"})
    markdown._demos = bench._demos
    assert markdown.prompt(sample, "open_model").startswith("| Model | Harrowgate |")
    request = bench.request(sample, "open_model")
    assert request.params.max_tokens == 64 and request.params.temperature == 0.0 and request.params.stop == ()
    # answers by letter or by word; the echoed option list says nothing
    from structbench.contract.benchmark import Attempt

    for reply, label in [("A", "supports"), ("B) False", "refutes"), ("Unknown", "not enough info"),
                         ("C", "not enough info"), ("A) True B) False C) Unknown? The answer is B", "refutes"),
                         ("The claim is true.", "supports")]:
        assert bench.score(sample, Attempt(output=reply), bench.strategy("open_model")).parsed == label, reply


def test_in_context_and_cot_have_three_held_out_demonstrations(synthetic_loaded: Loaded) -> None:
    bench, samples = synthetic_loaded
    sample = samples["all"][1]
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
    two = bench.prompt(samples["2class"][1], "in_context")
    assert "impossible" not in two
    assert two.count("Answer:\nThe claim is true.") == 2 and two.count("Answer:\nThe claim is false.") == 1


def test_pot_repeats_its_header_and_ends_with_the_code_line(synthetic_loaded: Loaded) -> None:
    bench, samples = synthetic_loaded
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


def test_markdown_serialization_and_kept_markers() -> None:
    bench = SciTab({"serialization": "markdown", "markup": "keep"})
    sample = bench.load("all", synthetic_context(), seed=0, limit=2)[0]
    zero = bench.prompt(sample, "zero_shot")
    assert "| [BOLD] Model | Harrowgate |" in zero and "| [BOLD] 6.3 |" in zero and "[EMPTY]" in zero
    assert "||" not in zero
    assert zero.count("Table 1: [ITALIC] Mean absolute error") == 1
    cot = bench.prompt(sample, "cot")
    assert cot.count("Table 1: [ITALIC] Mean absolute error") == 1  # in the Caption: line only


def test_unknown_options_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="serialization"):
        SciTab({"serialization": "markdwon"})
    with pytest.raises(UsageError, match="markup"):
        SciTab({"markup": "bold"})
    with pytest.raises(UsageError, match="load variant"):
        SciTab().demonstrations("all")


@pytest.mark.parametrize("fmt", list(SERIALIZERS))
def test_every_registered_serialization_shows_the_caption_once(synthetic_loaded: Loaded, fmt: str) -> None:
    base, samples = synthetic_loaded
    bench = SciTab({"serialization": fmt})
    bench._demos = base._demos  # same markup: the loaded demonstrations apply
    sample = samples["all"][0]
    for style in ("zero_shot", "in_context", "cot", "pot"):
        prompt = bench.prompt(sample, style)
        assert prompt.count(CAPTION) == 1, (fmt, style)
        assert "6.6" in prompt and "TideNet (ours)" in prompt
        assert prompts.style_of(prompt) == style
