"""StrucText-Eval: structure-rich text in 8 languages, 29 question templates, generated and released suites."""

from structbench.benchmarks.structext.benchmark import StrucTextEval

BENCHMARK = StrucTextEval

__all__ = ["BENCHMARK", "StrucTextEval"]
