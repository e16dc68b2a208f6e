"""SciTab's published Table 4: every row and column as printed, reconstructed dashes in their places."""

from __future__ import annotations

from published_checks import check_shape, value, values
from structbench.benchmarks.scitab.paper import TABLE4

ROWS = [
    "TAPAS-large (Tabfact)", "TAPEX-large (Tabfact)", "TAPEX-Zero-large", "TAPEX-Zero-XL", "Flan-T5-base",
    "Flan-T5-large", "FLan-T5-XL", "Flan-T5-XXL", "Alpaca-7B", "Vicuna-7B", "Vicuna-13B", "LLaMA-7B", "LLaMA-13B",
    "InstructGPT", "InstructGPT+CoT", "PoT", "GPT-4", "GPT-4+CoT", "Human",
]


def test_shape() -> None:
    columns = ["Zero-shot 2-class", "Zero-shot 3-class", "In-Context 2-class", "In-Context 3-class"]
    data = check_shape(TABLE4, ROWS, columns)
    assert sum(r.kind == "model" for r in data.rows) == 18
    assert len(data.numbers()) == 2 + 11 * 4 + 2 + 1 + 4 + 2 + 2 + 4  # = 61 printed numbers


def test_reconstructed_placements() -> None:
    data = TABLE4.published
    assert values(data, "TAPAS-large (Tabfact)") == {"zs_2class": 50.30, "zs_3class": None, "ic_2class": None,
                                                    "ic_3class": None}
    assert values(data, "InstructGPT+CoT") == {"zs_2class": None, "zs_3class": None, "ic_2class": 68.46,
                                              "ic_3class": 42.60}
    assert values(data, "PoT") == {"zs_2class": None, "zs_3class": None, "ic_2class": 63.79, "ic_3class": None}
    assert values(data, "Human") == {"zs_2class": None, "zs_3class": None, "ic_2class": 92.40, "ic_3class": 84.73}
    assert next(r for r in data.rows if r.name == "GPT-4+CoT").model == "GPT-4"


def test_numbers_quoted_in_the_text() -> None:
    data = TABLE4.published
    # section 4.2: "The best result is 63.62 for the 2-class setting (Vicuna-7B) and 38.05 for the 3-class setting
    # (FLAN-T5-XL)" among open-source models, zero-shot; "GPT-4 achieving 78.22 ... and 64.80"
    assert value(data, "Vicuna-7B", "zs_2class") == 63.62
    assert value(data, "FLan-T5-XL", "zs_3class") == 38.05
    assert (value(data, "GPT-4", "zs_2class"), value(data, "GPT-4", "zs_3class")) == (78.22, 64.80)
    open_models = [r for r in data.rows if r.group and r.group.startswith(("II.", "III."))]
    assert max(r.values[0] or 0 for r in open_models) == 63.62
    assert max(r.values[1] or 0 for r in open_models) == 38.05
