"""Whether a tracker's server answers, asked before its library is: MLflow's client retries a server that does not
answer for minutes (seven tries, 120 s each), and W&B's waits 90 s for its run to start, each printing its own
warnings, where a tracker that cannot take the run is meant to be one line, promptly."""

from __future__ import annotations

import http.client
import ssl
from urllib.parse import urlsplit

from structbench.core.redact import redact

REACH_TIMEOUT = 5.0
"""Seconds a server has to accept the connection, then again to begin its answer."""


def check_answers(url: str, path: str, what: str) -> None:
    """A ``ConnectionError`` (one line) unless the ``http(s)`` server of ``url`` answers ``GET path`` within
    ``REACH_TIMEOUT``: any HTTP status counts, only the answer is awaited (no credentials are sent, and the
    certificate is left to the tracker's own client, which may be told to trust another). ``what`` names the server
    in the message; a URL of another scheme is not checked."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return
    shown = redact(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        if parts.scheme == "https":
            unverified = ssl._create_unverified_context()  # a probe: nothing secret is sent
            connection: http.client.HTTPConnection = http.client.HTTPSConnection(
                parts.hostname, port, timeout=REACH_TIMEOUT, context=unverified)
        else:
            connection = http.client.HTTPConnection(parts.hostname, port, timeout=REACH_TIMEOUT)
    except ValueError as err:  # a port that is not a number
        raise ConnectionError(f"{what} {shown} cannot be reached ({err})") from None
    try:
        try:
            connection.connect()
        except OSError as err:
            reason = err.strerror or str(err) or type(err).__name__
            raise ConnectionError(f"{what} {shown} cannot be reached ({reason})") from None
        try:
            connection.request("GET", parts.path.rstrip("/") + path, headers={"Accept": "*/*"})
            connection.getresponse().read(1024)
        except TimeoutError:
            raise ConnectionError(f"{what} {shown} accepts connections but does not answer (no reply within "
                                  f"{REACH_TIMEOUT:g} s)") from None
        except (OSError, http.client.HTTPException) as err:
            reason = str(err) or type(err).__name__
            raise ConnectionError(f"{what} {shown} does not answer over HTTP ({reason})") from None
    finally:
        connection.close()
