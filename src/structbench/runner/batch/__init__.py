"""``--batch``: a run's model calls through the provider's batch API (OpenAI's Batch API, Anthropic's Message
Batches), at half the price, one batch per step of the strategies, resumable after any interruption.

``collector.BatchedBackend`` stands in for the run's backend; ``steps.run_steps`` runs every sample at once so
each step's calls go out together; ``ledger`` keeps the run's batches in its directory; ``providers`` says what a
provider's API must do (``openai``, ``anthropic``). See ``docs/usage/costs.md``.
"""
