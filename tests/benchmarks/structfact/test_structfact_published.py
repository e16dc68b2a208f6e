"""StructFact's published Tables 1, 3 and 7: every row and column as printed, and the paper's own sums."""

from __future__ import annotations

import pytest

from published_checks import check_shape, value, values
from structbench.benchmarks.structfact.paper import TABLE1, TABLE3, TABLE7

MODELS = [
    "Qwen2-7B", "LLaMA-3-8B", "Gemma-2-9B", "Qwen2-7B Instruct", "LLaMA-3-8B Instruct", "Gemma-2-9B It",
    "GLM-4-9B Chat", "Mistral-7B Instruct", "GPT-3.5-turbo", "GPT-4o-mini",
]
PROMPT_COLUMNS = [
    f"{setting} {metric}"
    for setting in ("Zero-shot w/o CoT", "Zero-shot w/ CoT", "Few-shot w/o CoT", "Few-shot w/ CoT", "Overall")
    for metric in ("Acc.", "F1")
]
TASK_COLUMNS = [
    f"{task} {metric}"
    for task in (
        "Arithmetic Calc.", "Geography-Time Reas.", "Multi-hop Reas.", "Composition Und.", "Struct. & Unstruct."
    )
    for metric in ("Acc.", "F1")
]


@pytest.mark.parametrize("table", [TABLE1, TABLE7], ids=["table1", "table7"])
def test_prompt_tables_shape_and_overall(table) -> None:
    data = check_shape(table, MODELS, PROMPT_COLUMNS)
    assert data.scale == "percent" and data.decimals == 2
    for model in MODELS:
        row = values(data, model)
        for m in ("acc", "f1"):  # Overall is the mean of the four prompt settings (to within rounding)
            mean = sum(row[f"{p}_{m}"] or 0.0 for p in ("zs_direct", "zs_cot", "fs_direct", "fs_cot")) / 4
            assert row[f"overall_{m}"] == pytest.approx(mean, abs=0.015)


def test_table1_numbers() -> None:
    data = TABLE1.published
    assert value(data, "GPT-4o-mini", "overall_f1") == 67.45
    assert value(data, "Qwen2-7B", "zs_direct_acc") == 29.94
    assert value(data, "LLaMA-3-8B Instruct", "fs_direct_f1") == 59.15
    assert value(TABLE7.published, "GPT-4o-mini", "zs_direct_acc") == 65.32


def test_table3_shape_and_overall_row() -> None:
    data = check_shape(TABLE3, [*MODELS, "Overall"], TASK_COLUMNS)
    assert data.rows[-1].kind == "aggregate"
    for column in data.columns:  # the Overall row is the mean of the ten models
        mean = sum(value(data, m, column.key) for m in MODELS) / len(MODELS)
        assert value(data, "Overall", column.key) == pytest.approx(mean, abs=0.015)
    assert value(data, "GPT-4o-mini", "comp_f1") == 72.44
    assert {c.setting["task"] for c in data.columns} == {
        "Arithmetic Calculation", "Geography-Time Reasoning", "Multi-hop Reasoning", "Composition Understanding",
        "Combining Structured and Unstructured",
    }


def test_every_number_has_its_setting() -> None:
    numbers = TABLE1.published.numbers()
    assert len(numbers) == 100
    first = numbers[0]
    assert (first.model, first.metric, first.value, first.scale) == ("Qwen2-7B", "Acc.", 29.94, "percent")
    assert first.setting["shots"] == "zero-shot" and first.setting["cot"] == "w/o CoT"
    assert "option orders" in first.setting["protocol"]
    assert first.source == "StructFact Table 1 (Zero-shot w/o CoT Acc.)"
