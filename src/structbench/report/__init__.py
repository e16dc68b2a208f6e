"""Reports over run directories: paper-style tables, figures, statistics, a per-sample browser, comparisons.

``write_report`` is the entry point; the layers below it are ``runs`` (reading run directories through
``structbench.runfiles.rundir``), ``entries`` (results joined with records and intervals), ``tables`` and ``plots``
(content),
``build`` (the document), and ``markdown``/``html`` (rendering).
"""
