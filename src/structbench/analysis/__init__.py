"""Analysis over records: paired tests between systems and a sweep's robustness, shared by
``metrics.json`` and the report."""
