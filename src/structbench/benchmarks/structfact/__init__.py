"""StructFact: factual reasoning over structured data (tables, lists, text), answered as options A/B/C.

Read top to bottom: ``source`` (where the data is), ``loader`` and ``evidence`` (records -> typed
samples), ``options``, ``prompts`` (+ ``examples``, ``truncation``; shuffles and perturbations are
``structbench.data.perturb``'s), ``strategies``,
``parser``, ``metrics``, and ``benchmark`` which ties them together.
"""

from structbench.benchmarks.structfact.benchmark import StructFact

BENCHMARK = StructFact

__all__ = ["BENCHMARK", "StructFact"]
