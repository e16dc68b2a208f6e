"""Where structbench keeps its own data in an Inspect log: written by ``inspect eval structbench/...``
(``inspect_tasks.tasks``) and by ``structbench convert --to inspect`` (``interop.inspect_log``), read back by
``structbench report`` (``report.inspect_runs``); and how its token counts become Inspect's own usage fields."""

ATTEMPT = "structbench_attempt"
"""The sample's store key holding the strategy's attempt: output, outputs, confidence, artifacts, calls."""
RECORD = "structbench"
"""The sample's metadata key holding a converted record's fields that have no place of their own in Inspect's
sample (error and its kind, cached calls, timings, reasoning counts, and any field records gain)."""
RESULT = "structbench_result"
"""The results' metadata key holding a converted run's whole result entry (``metrics.json``)."""
METRICS_GROUP = "structbench_metrics"
"""The group of the benchmark's metrics in a log's results (the name of the metric that computes them)."""


def model_usage_fields(prompt_tokens: int | None, completion_tokens: int | None, *, reasoning_tokens: int | None = None,
                       cached_tokens: int | None = None) -> dict[str, int] | None:
    """Token counts as the fields of Inspect's ``ModelUsage``, in its order (``inspect view`` and Inspect's data
    frames read them); None where the prompt or completion tokens are unknown: Inspect's counts default to 0, so
    unknown usage is left out, never written as 0, and so are unknown reasoning and cache-read counts.

    structbench's prompt tokens include those served from the provider's prompt cache; Inspect's ``input_tokens``
    leave them out (``input_tokens_cache_read``), so the input is the prompt less the cached tokens."""
    if prompt_tokens is None or completion_tokens is None:
        return None
    fields = {"input_tokens": prompt_tokens - (cached_tokens or 0), "output_tokens": completion_tokens,
              "total_tokens": prompt_tokens + completion_tokens}
    if cached_tokens is not None:
        fields["input_tokens_cache_read"] = cached_tokens
    if reasoning_tokens is not None:
        fields["reasoning_tokens"] = reasoning_tokens
    return fields
