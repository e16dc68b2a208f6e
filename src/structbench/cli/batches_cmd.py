"""``structbench batches RUN_DIR [--cancel]``: a run's batches (``--batch``) as its ledger has them, each open one's
status asked of the provider, and cancelling them."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from structbench.cli.common import echo
from structbench.core.errors import RunStoppedError, UsageError
from structbench.core.redact import redact

API_RETRIES = 2
"""Retries of a call to the batch API (the SDK's, on a dropped connection or a 5xx): a listing answers soon or says
the provider is not reachable."""


def batches(
    run_dir: Annotated[Path, typer.Argument(help="A run directory (runs/...).", show_default=False)],
    cancel: Annotated[bool, typer.Option("--cancel", help="Cancel every batch of the run still running.")] = False,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="The server, where the run's had a password (never stored).")
    ] = None,
    api_key_env: Annotated[str, typer.Option(help="Environment variable holding the API key.")] = "OPENAI_API_KEY",
    offline: Annotated[bool, typer.Option("--offline", help="Only the ledger: ask the provider nothing.")] = False,
) -> None:
    """List a run's batches (--batch): the ledger in RUN_DIR/batches, with each running batch's status from the
    provider; --cancel cancels the running ones (the answers they hold are kept; the same run command sends the rest
    again). Of a damaged ledger, what can be read is listed, and what cannot is named."""
    from structbench.core.redact import MASK
    from structbench.runfiles.manifest import read_manifest
    from structbench.runner.batch.ledger import Ledger

    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: no such run directory")
    ledger = Ledger(run_dir, salvage=True)
    for problem in ledger.problems:
        echo(f"warning: {problem}", err=True)
    if not ledger.entries:
        echo(f"{run_dir}: no batches" + ("" if ledger.problems else " (the run did not use --batch)"))
        return
    manifest = read_manifest(run_dir)
    if manifest is None:
        raise UsageError(f"{run_dir}: no manifest.json: not a run directory")
    config = manifest.config
    live: dict[str, str] = {}
    if not offline and any(e.open for e in ledger.entries):
        url = base_url or config.base_url
        if url is not None and MASK in url:
            raise UsageError(f"{run_dir}: the run's --base-url had a password, which is never stored; give --base-url")
        live = asyncio.run(_ask(config.model, url, api_key_env, ledger, cancel))
    rows = ["| batch | id | state | provider status | requests | done | failed | step | round | created | notes |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in ledger.entries:
        created = datetime.fromtimestamp(e.created, UTC).isoformat(timespec="seconds")
        rows.append(f"| {e.tag} | {e.id or '–'} | {e.state} | {live.get(e.tag, e.status or '–')} | {e.requests} | "
                    f"{e.counts.get('completed', '–')} | {e.counts.get('failed', '–')} | {e.step} | {e.round} | "
                    f"{created} | {'; '.join(e.notes) or '–'} |")
    echo("\n".join(rows))
    echo(f"ledger: {ledger.path}")


async def _ask(model: str, base_url: str | None, api_key_env: str, ledger: Any, cancel: bool) -> dict[str, str]:
    """Each open batch's status at the provider (tag -> status), cancelling it first with ``cancel``."""
    from structbench.backends.factory import BackendSpec, make_backend
    from structbench.runner.batch.collector import not_found
    from structbench.runner.batch.providers import provider_for

    backend = make_backend(BackendSpec.parse(model, base_url=base_url, api_key_env=api_key_env,
                                             max_retries=API_RETRIES))
    provider = provider_for(backend)
    out: dict[str, str] = {}
    try:
        known = {e.id for e in ledger.entries if e.id}
        for entry in ledger.entries:
            if not entry.open:
                continue
            batch_id = entry.id or await provider.find(entry, known)
            if batch_id is None:
                out[entry.tag] = "never created"
                continue
            try:
                if cancel:
                    out[entry.tag] = f"{await provider.cancel(batch_id)} (cancel asked)"
                    echo(f"cancel asked for batch {batch_id}", err=True)
                else:
                    status = await provider.status(batch_id)
                    out[entry.tag] = f"{status.word}, {status.completed}/{status.total} done"
            except Exception as err:
                if not not_found(err):
                    raise
                out[entry.tag] = "not found (404)"
                echo(f"warning: batch {batch_id}: the provider does not know it (404 Not Found: another API key or "
                     "organization than the one that sent it, or the provider lost it); the run's next session with "
                     "--batch marks it abandoned and sends its requests again", err=True)
    except Exception as err:  # the provider's API, however it fails (down, a refused key): one line
        where = backend.base_url or backend.backend
        raise RunStoppedError(redact(
            f"the batch API of {model} at {where} did not answer: {type(err).__name__}: {err}; the ledger alone: "
            f"structbench batches {ledger.run_dir} --offline")) from None
    finally:
        await provider.aclose()
    return out
