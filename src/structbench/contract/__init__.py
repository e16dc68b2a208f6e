"""What the core and a benchmark agree on: the ``Benchmark`` and ``Strategy`` interfaces
(``contract.benchmark``) and where a benchmark's data comes from (``contract.provenance``). Plugin
authors may import both from the package root too (its ``benchmark`` and ``provenance`` re-exports)."""
