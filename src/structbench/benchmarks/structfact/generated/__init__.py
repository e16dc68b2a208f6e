"""StructFact questions generated from any tables, every label executed and re-derived (``structfact:generated``).

Read top to bottom: ``tables`` (where tables come from), ``profile`` (what their columns hold, foreign
keys), ``claims`` (what a question asserts: the record's QUERY), ``views`` (evidence as the release
writes it), ``templates`` (one module per task), ``execute`` (the generator's label: SQL over the shown
cells), ``verify`` (the independent check from the EVIDENCE strings), ``generator`` (label mix, seeded
draws), ``release`` (the release's JSON format), ``variant`` (the benchmark variant) and ``writer``
(``structbench generate structfact --out set.json``).
"""
