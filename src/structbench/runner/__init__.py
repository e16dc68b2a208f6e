"""The runner: a run's configuration, scheduling, response cache, records and results."""
