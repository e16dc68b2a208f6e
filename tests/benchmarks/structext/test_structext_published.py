"""StrucText-Eval's published Tables 3, 4 and 6: every row and column as printed."""

from __future__ import annotations

from published_checks import check_shape, value
from structbench.benchmarks.structext.paper import TABLE3, TABLE4, TABLE6

OPEN = ["Qwen2-7B", "Qwen2-72B", "Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.1-405B", "Mistral-7B"]
PROMPTS = ["Base", "Self-CoT", "PS-CoT", "w/ Hint"]
HARD = ["GPT-4o-Turbo", "GPT-4o-Mini", "Gemini1.5-Pro", "Gemini1.5-Pro-Flash", "GLM-4-Plus", "GLM-4-Flash",
        "QWen-2-7B", "QWen-2-72B", "Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.1-405B", "Mistral-0.2-7B"]


def test_test_suite_table() -> None:
    columns = ["JSON", "LaTeX", "Md.", "ORG", "CSV", "Tree", "XML", "YAML", "PC", "PW", "SY", "TR", "JO", "ST", "ND",
               "TH", "all"]
    data = check_shape(TABLE3, [f"{m}, {p}" for m in OPEN for p in PROMPTS], columns)
    assert data.decimals == 1
    # section 5.1 quotes Qwen2-72B Base JSON 85.8, Llama-3.1-8B Base LaTeX 64.6, Llama-3.1-70B PW 75.4 -> 84.9
    assert value(data, "Qwen2-72B, Base", "json") == 85.8
    assert value(data, "Llama-3.1-8B, Base", "latex") == 64.6
    assert (value(data, "Llama-3.1-70B, Base", "pw"), value(data, "Llama-3.1-70B, w/ Hint", "pw")) == (75.4, 84.9)
    assert value(data, "Llama-3.1-405B, Self-CoT", "jo") == 100.0
    assert {r.setting["prompt"] for r in data.rows} == set(PROMPTS)


def test_hard_suite_tables() -> None:
    data = check_shape(TABLE4, ["Human", *HARD], ["Base", "w/ Hint", "3-Shot", "Simple 3-Shot"])
    assert [v is None for v in data.rows[0].values] == [False, True, True, True]
    assert value(data, "GPT-4o-Turbo", "shot3") == 69.5
    other = check_shape(TABLE6, HARD, ["Human", "GPT-4o", "4o-Mini", "RougeL", "BLEU", "EM"])
    for model in HARD:  # Table 6's RougeL column is Table 4's Base column
        assert value(other, model, "rougel") == value(data, model, "base")
