"""RelationalFactQA: tables from parametric memory, gold by SQL execution, cell F1 and tuple similarity.

The QATCH-style generator lives in ``structbench.benchmarks.rfqa.generator`` (``generate_pairs``).
"""

from structbench.benchmarks.rfqa.benchmark import RFQABenchmark

BENCHMARK = RFQABenchmark

__all__ = ["BENCHMARK", "RFQABenchmark"]
