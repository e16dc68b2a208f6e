"""RelationalFactQA's published Tables 2, 3 and 4 (transposed: models as rows), with the paper's own sums."""

from __future__ import annotations

import pytest

from published_checks import check_shape, value, values
from structbench.benchmarks.rfqa.complexity import CLASSES
from structbench.benchmarks.rfqa.paper import TABLE2, TABLE3, TABLE4

MODELS = ["Mistral 7B", "QWEN 2.5-7B", "LLama 3.1-8B", "GPT 4.1 mini", "Gemma 2-9B", "LLama 3.3-70B", "DeepSeek 70B",
          "GPT 4.1", "QWEN 3-235B"]


def test_table2_shape_and_average() -> None:
    data = check_shape(TABLE2, MODELS, [f"{m} {x}" for m in ("NL", "SQL", "CoT") for x in ("F1", "TS", "AVG")])
    assert data.scale == "fraction"
    for model in MODELS:
        row = values(data, model)
        for m in ("nl", "sql", "cot"):
            mean = ((row[f"{m}_f1"] or 0.0) + (row[f"{m}_ts"] or 0.0)) / 2
            if (model, m) == ("GPT 4.1", "sql"):  # the paper's one inconsistent cell (see the file's notes)
                assert row[f"{m}_avg"] == 0.302 and mean == pytest.approx(0.242)
                continue
            assert row[f"{m}_avg"] == pytest.approx(mean, abs=0.0011)
    assert value(data, "GPT 4.1", "nl_ts") == 0.247  # "The best TS score is only 0.247, obtained by GPT 4.1"


def test_table3_shape_and_differences() -> None:
    columns = [f"{m} {x}" for m in ("NL", "SQL", "CoT") for x in ("Num", "Cat", "Diff %")]
    data = check_shape(TABLE3, MODELS, columns)
    assert data.scale_of(data.column("nl_diff")) == "percent"
    for model in MODELS:
        row = values(data, model)
        for m in ("nl", "sql", "cot"):
            num, cat, diff = row[f"{m}_num"] or 0.0, row[f"{m}_cat"] or 0.0, row[f"{m}_diff"]
            if (model, m) in {("GPT 4.1", "sql"), ("GPT 4.1", "cot")}:  # printed -15 and -14 (see notes)
                continue
            assert diff == pytest.approx((cat - num) / num * 100, abs=1.5)
    assert value(data, "LLama 3.1-8B", "nl_diff") == 125


def test_table4_shape() -> None:
    rows = [f"{m}, {x}" for m in ("LLama 3.3-70B", "GPT 4.1", "QWEN 3-235B") for x in ("NL", "SQL", "CoT")]
    data = check_shape(TABLE4, rows, list(CLASSES))
    assert value(data, "GPT 4.1, CoT", "select_without_where") == 0.995
    assert value(data, "LLama 3.3-70B, NL", "order_by") == 0.174
