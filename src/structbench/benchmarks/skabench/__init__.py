"""SKA-Bench: structured knowledge (KG, Table, KG+Text, Table+Text) QA over four ability testbeds."""

from structbench.benchmarks.skabench.benchmark import SkaBench, SkaOptions
from structbench.benchmarks.skabench.units import Instance, Passage, Row, Triple

BENCHMARK = SkaBench

__all__ = ["BENCHMARK", "Instance", "Passage", "Row", "SkaBench", "SkaOptions", "Triple"]
