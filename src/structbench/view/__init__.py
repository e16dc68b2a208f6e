"""``structbench view``: a local page that follows run directories as ``structbench run`` writes them.

The layers: ``tail`` reads a ``samples.jsonl`` incrementally, ``liveness`` tells a running session from a dead one,
``watch`` follows one run directory (status, progress, live entries from ``live``, the sample browser's queries from
``samples``), ``hub`` finds and refreshes every run, and ``server`` serves the page (``templates``) and its JSON.
"""
