"""A run's results where the ecosystem reads them: Inspect AI logs, lm-evaluation-harness results and samples
files, and Hugging Face dataset folders (``structbench convert`` and ``structbench publish``).

Every writer reads run directories through ``interop.rundir`` (over the run-files layer's one reader,
``structbench.runfiles.rundir``: records as columns, each full record read back as it is written
out) and writes with the
target's own library where it has one (``inspect_ai.log``, ``huggingface_hub``, ``pyarrow``). What is written has
its secrets redacted.
"""
