"""The benchmark contract: scorers read the strategy object's answer format, never its name, and every benchmark is
generic in its own options model."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from operator import eq
from typing import get_args

import pytest

from faults import child_pythonpath
from structbench.backends.base import Request
from structbench.benchmarks import BENCHMARKS
from structbench.benchmarks.scitab import SciTab
from structbench.benchmarks.structfact import StructFact
from structbench.contract.benchmark import DIRECT, REASONED, AnswerFormat, Attempt, Benchmark, PaperParts, SequenceAt
from structbench.core.errors import UsageError
from structbench.data.sample import LabelGold, Sample
from structbench.strategies import SingleTurn


def claim(benchmark: str, variant: str, label: str) -> Sample:
    return Sample(id="c1", benchmark=benchmark, variant=variant, task="t", question="q", gold=LabelGold(label=label))


def unnamed(answer: AnswerFormat) -> SingleTurn:
    """A strategy no scorer knows by name: only its answer format says how to read its replies."""
    return SingleTurn("a_strategy_of_my_own", lambda s: Request.chat("q"), answer=answer)


def test_scitab_reads_the_answer_format_not_the_name() -> None:
    bench, sample = SciTab(), claim("scitab", "all", "refutes")
    reply = "At first the claim looks true, but the table says otherwise. Answer: false"
    assert bench.score(sample, Attempt(output="It is true... no, false"), unnamed(DIRECT)).parsed == "supports"
    assert bench.score(sample, Attempt(output="It is true... no, false"), unnamed(REASONED)).parsed == "refutes"
    assert bench.score(sample, Attempt(output=reply), unnamed(REASONED)).score == 1.0
    # a bare option letter is an answer only where the prompt listed options
    assert bench.score(sample, Attempt(output="B"), unnamed(AnswerFormat(options=True))).parsed == "refutes"
    assert bench.score(sample, Attempt(output="B"), unnamed(DIRECT)).parsed is None
    # the benchmark's own strategies carry their formats
    assert bench.strategy("cot").answer == REASONED and bench.strategy("pot").answer.program
    assert bench.strategy("zero_shot").answer.options and not bench.strategy("in_context").answer.options


def test_structfact_reads_the_answer_format_not_the_name() -> None:
    bench, sample = StructFact(), claim("structfact", "demo", "YES")
    reply = Attempt(output="C at first sight, but the final answer is A")
    assert bench.score(sample, reply, unnamed(DIRECT)).parsed == "NOT SURE ENOUGH"
    assert bench.score(sample, reply, unnamed(REASONED)).parsed == "YES"
    assert bench.strategy("zero_shot_cot").answer == REASONED and bench.strategy("few_shot").answer == DIRECT
    assert bench.strategy("self_refine").answer == REASONED


def test_rfqa_cot_output_is_derived() -> None:
    rfqa = BENCHMARKS.get("rfqa")()
    assert rfqa.strategy("cot").answer.derived and not rfqa.strategy("nl").answer.derived


@pytest.mark.parametrize("name", BENCHMARKS.names())
def test_every_benchmark_is_generic_in_its_own_options(name: str) -> None:
    cls = BENCHMARKS.get(name)
    base = next(b for b in cls.__orig_bases__ if getattr(b, "__origin__", None) is Benchmark)  # type: ignore[attr-defined]
    assert get_args(base) == (cls.Options,)
    assert not re.search(r"^    Options\b", inspect.getsource(cls), re.M), f"{name} declares its Options twice"
    assert isinstance(cls().options, cls.Options)


def test_options_are_declared_once_in_the_class_statement() -> None:
    from toybench import ToyBench, ToyOptions

    assert ToyBench.Options is ToyOptions
    with pytest.raises(TypeError, match=r"Benchmark\[ToyOptions\].*do not declare Options again"):
        class Twice(Benchmark[ToyOptions]):
            Options = StructFact.Options


@pytest.mark.parametrize(("hook", "moved"), [
    ("paper_scoring", "paper = PaperParts(scoring=...)"),
    ("prompt_options", "loading = Loading(prompt_options=...)"),
    ("uses_model_context", "loading = Loading(fits_context=True)"),
    ("robustness_presets", "paper = PaperParts(robustness=...)"),
])
def test_a_plugin_on_a_moved_hook_is_told_where_it_went(hook: str, moved: str) -> None:
    with pytest.raises(TypeError, match=rf"^Old: {hook} moved: declare {re.escape(moved)}"):
        type("Old", (Benchmark,), {hook: ()})


def test_the_optional_parts_are_grouped_declarations() -> None:
    assert SciTab.paper.scoring == ("pot_equal",) and SciTab.paper.tables and SciTab.paper.robustness
    assert "serialization" in SciTab.loading.prompt_options
    assert BENCHMARKS.get("skabench").loading.fits_context and not SciTab.loading.fits_context
    assert BENCHMARKS.get("rfqa").loading.variant_parts["all"]


def test_tables_named_by_a_target_read_compare_and_print_as_the_tuple() -> None:
    from structbench.benchmarks.structext.paper import TABLES

    tables = SequenceAt("structbench.benchmarks.structext.paper:TABLES")
    assert list(tables) == list(TABLES) and len(tables) == len(TABLES) and tables[0] is TABLES[0]
    assert tables[1:] == TABLES[1:] and TABLES[2] in tables and tables.index(TABLES[1]) == 1
    assert tables == TABLES and eq(TABLES, tables) and tables != TABLES[:1]  # eq: the tuple on the left
    assert repr(tables) == repr(TABLES)
    assert PaperParts(tables=tables) == PaperParts(tables=TABLES)
    with pytest.raises(UsageError, match=r"^the paper.s parts failed to load from structbench\.nowhere:TABLES: "):
        list(SequenceAt("structbench.nowhere:TABLES"))


def test_a_benchmarks_paper_tables_are_imported_when_first_read() -> None:
    """StrucText-Eval's tables (and ``structbench.papers``, which they are built from) are not imported with the
    benchmark: a run never reads them (issue 44's start-up)."""
    script = (
        "import sys\n"
        "from structbench.benchmarks.structext import StrucTextEval\n"
        "assert not [m for m in sys.modules if m.startswith('structbench.papers')], 'imported with the benchmark'\n"
        "assert StrucTextEval.paper.scoring and 'structbench.papers' not in sys.modules\n"
        "assert [t.name for t in StrucTextEval.paper.tables][0].startswith('structext')\n"
        "assert 'structbench.papers.spec' in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=child_pythonpath()),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
