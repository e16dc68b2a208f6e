"""Multiple-comparison corrections and the smallest detectable difference, against hand computations."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from structbench.stats.multiple import adjust, detectable, holm


def test_holm_is_the_step_down_procedure() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> running max 0.02, 0.03, 0.06, 0.06
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([0.2]) == [0.2]  # one test: nothing to correct


def test_bh_is_scipys_and_nan_is_no_test() -> None:
    p = [0.01, 0.04, 0.03, 0.5]
    assert adjust(p, "bh") == pytest.approx(list(stats.false_discovery_control(p)))
    out = adjust([0.01, math.nan, 0.04], "holm")
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.04)
    assert all(math.isnan(x) for x in adjust([math.nan], "bh"))
    assert all(b <= h for b, h in zip(adjust(p, "bh"), adjust(p, "holm"), strict=True))  # BH rejects more


def test_detectable_difference_is_2_8_standard_errors() -> None:
    assert detectable(0.01) == pytest.approx((1.959964 + 0.841621) * 0.01, rel=1e-5)
    assert detectable(0.01, alpha=0.01) > detectable(0.01)  # type: ignore[operator]
    assert detectable(None) is None and detectable(math.nan) is None
