"""A finished run logged where teams track experiments: MLflow and Weights & Biases (``structbench run --log-to``,
after the run is safe on disk, and ``structbench log RUN_DIR --to`` for runs already made).

Every tracker logs the same ``Payload`` (``trackers.payload``): the run's configuration as parameters, each result
entry's headline with its interval, n and baselines as metrics, token and cost totals, and ``manifest.json``,
``metrics.json`` and the HTML report as artifacts (the per-sample table when asked). Each tracker is one
``TrackerEntry`` in ``TRACKERS`` (``trackers.registry``); its library is imported only when a run is logged to it.
"""

from __future__ import annotations

from structbench.interop.trackers.registry import TRACKERS, TrackerEntry, TrackerError, TrackerOption, Tracking

__all__ = ["TRACKERS", "TrackerEntry", "TrackerError", "TrackerOption", "Tracking"]
