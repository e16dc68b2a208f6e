"""The answer check equals the official scorer's (``databench_eval.Evaluator.default_compare``) on every kind of
prediction: right, reformatted, near, wrong, empty, and its quirks."""

from __future__ import annotations

import pytest

from structbench.benchmarks.databench.answers import SEMANTICS, is_correct

databench_eval = pytest.importorskip("databench_eval")

CASES: dict[str, tuple[str, list[str]]] = {
    "boolean": ("True", ["True", "true", "TRUE", "yes", "Y", " 'True' ", "[True]", "True.", "False", "no", "n", "",
                         "nan", "None", "1", "Yes, it is"]),
    "category": ("North", ["North", " North ", "'North'", "[North]", '"North"', "north", "North.", "South", "",
                           "None", "np.nan", "Nor th", "2020"]),
    "number": ("302.0505555555556", ["302.0505555555556", "302.05", "302.059", "302.0599", "302.06", "302",
                                     "302,05", "$302.05", "3.02e2", "-302.05", "[302.05]", "'302.05'", "", "abc",
                                     "3.0.2", "9" * 400, "٣٠٢.٠٥", "302.05²"]),
    "list[category]": ("['apple', 'cherry', 'apple', 'pear']", [
        "['apple', 'cherry', 'apple', 'pear']", "['pear', 'apple', 'cherry', 'apple']", "apple, cherry, apple, pear",
        "['apple', 'cherry', 'pear', 'pear']", "['apple', 'cherry', 'pear']", "['Apple', 'cherry', 'apple', 'pear']",
        "[]", "", "['apple', 'cherry', 'apple', 'pear', '']", "['apple', None, 'apple', 'pear']",
        "[np.str_('apple'), 'cherry', 'apple', 'pear']"]),
    "list[number]": ("[484.34, 468.43, 453.26]", [
        "[484.34, 468.43, 453.26]", "[453.26, 484.34, 468.43]", "484.34, 468.43, 453.26", "[484.349, 468.431, 453.262]",
        "[484.35, 468.43, 453.26]", "[484.34, 468.43]", "[484.34, 468.43, 453.26, 453.26]", "[]", "",
        "[np.float64(484.34), np.float64(468.43), np.float64(453.26)]", "[484.34, 468.43, abc]", "[484.34,, 468.43]"]),
}
DATES = ("2016-03-22", ["2016-03-22", "2016-03-22 00:00:00+00:00", "March 22, 2016", "2016/03/22", "22 Mar 2016",
                        "2016-03-23", "2016-03", "not a date"])
DATE_LISTS = ("['2016-03-22', '2017-01-05']", ["['2017-01-05', '2016-03-22']", "[2016-03-22 00:00:00, 2017-01-05]",
                                              "['2016-03-22', '2017-01-06']", "['2016-03-22']"])
EMPTY_GOLDS = [("", "category"), ("nan", "number"), ("[]", "list[number]"), ("None", "boolean")]


def official(prediction: str, gold: str, semantic: str) -> bool:
    return bool(databench_eval.Evaluator(qa=[]).default_compare(prediction, gold, semantic))


def cases() -> list[tuple[str, str, str]]:
    out = [(p, gold, semantic) for semantic, (gold, predictions) in CASES.items() for p in predictions]
    out += [(p, DATES[0], "category") for p in DATES[1]]
    out += [(p, DATE_LISTS[0], "list[category]") for p in DATE_LISTS[1]]
    out += [(p, gold, semantic) for gold, semantic in EMPTY_GOLDS for p in ("", "nan", "x", "0")]
    return out


@pytest.mark.parametrize(("prediction", "gold", "semantic"), cases())
def test_the_verdict_is_the_official_scorers(prediction: str, gold: str, semantic: str) -> None:
    assert is_correct(prediction, gold, semantic) == official(prediction, gold, semantic)


def test_the_cases_hold_right_and_wrong_predictions_of_every_type() -> None:
    verdicts = {(s, is_correct(p, g, s)) for p, g, s in cases()}
    assert verdicts == {(s, v) for s in SEMANTICS for v in (True, False)}


def test_the_quirks_are_kept() -> None:
    assert is_correct("302.059", "302.0505555555556", "number")  # two decimals, truncated
    assert not is_correct("302.06", "302.0505555555556", "number")
    assert is_correct("$302.05", "302.05", "number")  # every other character dropped
    assert is_correct("['apple', 'cherry', 'pear', 'pear']", "['apple', 'cherry', 'apple', 'pear']", "list[category]")
    assert not is_correct("['apple', 'cherry', 'pear']", "['apple', 'cherry', 'apple', 'pear']", "list[category]")
    assert is_correct("March 22, 2016", "2016-03-22", "category")  # the same day
    assert is_correct("", "nan", "number") and not is_correct("", "3", "number")


def test_where_the_official_check_stops_the_prediction_is_wrong() -> None:
    with pytest.raises(NotImplementedError):
        official("-1", "North", "category")  # pandas reads -1 as a date it cannot represent
    assert not is_correct("-1", "North", "category")


def test_an_unknown_type_is_refused() -> None:
    with pytest.raises(ValueError, match="no answer type 'text'"):
        is_correct("a", "a", "text")
    assert is_correct("a", "a", " category ")  # the official check strips the type
