"""Where structbench keeps its own data in an Inspect log: written by ``inspect eval structbench/...``
(``inspect_tasks.tasks``) and by ``structbench convert --to inspect`` (``interop.inspect_log``), read back by
``structbench report`` (``report.inspect_runs``)."""

ATTEMPT = "structbench_attempt"
"""The sample's store key holding the strategy's attempt: output, outputs, confidence, artifacts, calls."""
RECORD = "structbench"
"""The sample's metadata key holding a converted record's fields that have no place of their own in Inspect's
sample (error and its kind, cached calls, timings, reasoning counts, and any field records gain)."""
RESULT = "structbench_result"
"""The results' metadata key holding a converted run's whole result entry (``metrics.json``)."""
METRICS_GROUP = "structbench_metrics"
"""The group of the benchmark's metrics in a log's results (the name of the metric that computes them)."""
