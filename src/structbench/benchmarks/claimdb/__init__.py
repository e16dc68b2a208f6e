"""ClaimDB (Theologitis et al., ACL 2026): verify claims against whole databases, by querying them.

Read top to bottom: ``source`` (the Hub release: claims and zipped SQLite databases), ``claims`` (one validated record
per claim), ``databases`` (the zips opened, read-only, in the cache), ``prompts`` (the paper's agent prompt and
tool), ``parse`` (the verdict of the final reply), ``metrics``, ``paper`` (the results table and its preset),
``generator`` (a small seeded set in the release's layout), ``benchmark``.
"""

from structbench.benchmarks.claimdb.benchmark import ClaimDB

BENCHMARK = ClaimDB

__all__ = ["BENCHMARK", "ClaimDB"]
