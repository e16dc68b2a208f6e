"""SciTab: scientific claims checked against a paper's table (supports / refutes / not enough info).

Read top to bottom: ``source`` (the data file), ``markup`` (cell markers), ``pool`` (held-out
demonstrations), ``samples``, ``prompts`` (Appendix H), ``parse``, ``program`` (program-of-thought in
the sandbox), ``metrics``, ``benchmark``.
"""

from structbench.benchmarks.scitab.benchmark import SciTab

BENCHMARK = SciTab

__all__ = ["BENCHMARK", "SciTab"]
