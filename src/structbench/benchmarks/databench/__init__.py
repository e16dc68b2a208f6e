"""DataBench (SemEval-2025 Task 8): questions over real-world tables, over the whole table or a 20-row sample.

Read top to bottom: ``source`` (the Hub repository's files), ``questions`` (``qa.parquet`` as samples), ``tables``
(a table as the prompts show it), ``prompts``, ``parse``, ``program`` (program-of-thought in the sandbox),
``answers`` (the official check), ``benchmark``; ``generator`` writes test sets in the release's layout.
"""

from structbench.benchmarks.databench.benchmark import DataBench

BENCHMARK = DataBench

__all__ = ["BENCHMARK", "DataBench"]
