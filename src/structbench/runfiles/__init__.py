"""The run files: a run's configuration, ``manifest.json``, ``samples.jsonl``'s records,
``metrics.json``'s results and scored outcomes, a sweep's cells, ``progress.json``, the format's version,
Inspect logs' layout, and the one reader of a run directory (``rundir``). The runner writes them;
report, interop, view and the API read them through this package."""
