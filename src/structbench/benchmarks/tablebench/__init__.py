"""TableBench: questions over a table (fact checking, numerical reasoning, data analysis, charts), asked with the
release's own instructions under four instruction types.

Read top to bottom: ``taxonomy`` (question types, metrics, instruction types), ``source`` (the Hub files),
``samples``, ``prompts`` (the release's instructions; their templates for generated sets), ``parse``, ``harness``
and ``program`` (programs in the sandbox, the chart test), ``metrics`` (EM, EM within 10%, ROUGE-L), ``scoring``,
``oracle``, ``paper``, ``benchmark``; ``generate`` writes a set in the release's layout.
"""

from structbench.benchmarks.tablebench.benchmark import TableBench

BENCHMARK = TableBench

__all__ = ["BENCHMARK", "TableBench"]
