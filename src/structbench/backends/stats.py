"""What a backend's calls are doing right now (in flight, retried, timed out, tokens out), for the progress line.

A slow server looks like a hung run unless these are shown: a reply that takes minutes, requests queued behind
it, timeouts and their retries. The caller (``runner.calls.ModelCaller``) counts calls in flight and tokens;
the backend counts its own retries and timeouts. Worker processes send snapshots to the run's process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CallSnapshot:
    """The counters at one moment; snapshots of several workers add up."""

    in_flight: int = 0
    oldest: float | None = None
    """``time.monotonic()`` when the oldest call still in flight was sent (one clock for every process of a
    machine), None when none is."""
    retries: int = 0
    """Requests sent again after a failure worth retrying (a timeout, 429, 5xx, a dropped connection)."""
    timeouts: int = 0
    """Requests that got no complete reply within the timeout (every try counts)."""
    answered: int = 0
    """Calls that returned a reply from the model (not from the cache)."""
    tokens: int = 0
    """Completion tokens of those replies, where the backend reports them."""

    def __add__(self, other: CallSnapshot) -> CallSnapshot:
        oldest = [t for t in (self.oldest, other.oldest) if t is not None]
        return CallSnapshot(
            self.in_flight + other.in_flight, min(oldest) if oldest else None, self.retries + other.retries,
            self.timeouts + other.timeouts, self.answered + other.answered, self.tokens + other.tokens,
        )

    def oldest_age(self, now: float | None = None) -> float | None:
        """Seconds the oldest call in flight has been waiting."""
        if self.oldest is None:
            return None
        return max(0.0, (time.monotonic() if now is None else now) - self.oldest)


@dataclass
class CallStats:
    """The live counters of one backend in one process."""

    retries: int = 0
    timeouts: int = 0
    answered: int = 0
    tokens: int = 0
    _started: dict[int, float] = field(default_factory=dict)
    _next: int = 0

    def begin(self) -> int:
        """A call was sent; returns its ticket for ``end``."""
        ticket, self._next = self._next, self._next + 1
        self._started[ticket] = time.monotonic()
        return ticket

    def end(self, ticket: int, tokens: int | None = None, answered: bool = False) -> None:
        """The call of ``ticket`` returned (``answered``: with a reply of ``tokens`` completion tokens) or failed."""
        self._started.pop(ticket, None)
        if answered:
            self.answered += 1
            self.tokens += tokens or 0

    def snapshot(self) -> CallSnapshot:
        started = list(self._started.values())  # one C-level copy: safe to read from the progress thread
        return CallSnapshot(len(started), min(started) if started else None, self.retries, self.timeouts,
                            self.answered, self.tokens)
