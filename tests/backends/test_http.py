"""aiohttp imported through ``backends.http``: its TLS contexts read the CA certificates on first use, and verify.

Each case runs in a fresh interpreter: the certificates are read once a process, and the test process may have
imported aiohttp already.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
import trustme

_CONTEXTS = """
import json, os, ssl
from structbench.backends.http import aiohttp
import aiohttp.connector as connector
contexts = [connector._SSL_CONTEXT_VERIFIED, connector._SSL_CONTEXT_UNVERIFIED]
print(json.dumps({
    "types": [type(c).__name__ for c in contexts],
    "at_import": [ssl._SSLContext.cert_store_stats(c)["x509_ca"] for c in contexts],  # without loading
    "used": [c.cert_store_stats()["x509_ca"] for c in contexts],
    "verify": [contexts[0].verify_mode == ssl.CERT_REQUIRED, contexts[0].check_hostname,
               contexts[1].verify_mode == ssl.CERT_NONE],
    "env": os.environ.get("SSL_CERT_FILE"),
    "default": ssl.create_default_context().cert_store_stats()["x509_ca"],
}))
"""

_FETCH = """
import asyncio, ssl, sys
from structbench.backends.http import aiohttp
from aiohttp import web

async def main():
    server_ssl = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ssl.load_cert_chain(sys.argv[1], sys.argv[2])
    app = web.Application()
    app.router.add_get("/", lambda request: web.Response(text="hello over TLS"))
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ssl)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"https://127.0.0.1:{port}/") as resp:
                print(resp.status, await resp.text())
    except aiohttp.ClientConnectorCertificateError as err:
        print("certificate refused:", err)
    finally:
        await runner.cleanup()

asyncio.run(main())
"""


def _python(code: str, *args: str, env: dict[str, str]) -> str:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _env(**changes: str | None) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in changes.items():
        env.pop(key, None)
        if value is not None:
            env[key] = value
    return env


@pytest.mark.parametrize("user_file", [None, "system"])
def test_the_contexts_load_the_default_certificates_when_first_used(user_file: str | None) -> None:
    system = ssl.get_default_verify_paths().cafile
    if system is None:
        pytest.skip("this system has no CA bundle file")
    chosen = system if user_file else None
    got = json.loads(_python(_CONTEXTS, env=_env(SSL_CERT_FILE=chosen)))
    assert got["types"] == ["DeferredCAContext", "DeferredCAContext"]
    assert got["at_import"] == [0, 0]  # nothing read while importing
    assert got["default"] > 0
    assert got["used"] == [got["default"], got["default"]]  # the very certificates aiohttp would have read
    assert got["verify"] == [True, True, True]  # verified, and unverified, as aiohttp made them
    assert got["env"] == chosen  # the user's setting is back as it was


def test_https_is_verified_against_the_certificates_the_user_names(tmp_path: Path) -> None:
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1")
    key, chain, ca_file = tmp_path / "key.pem", tmp_path / "chain.pem", tmp_path / "ca.pem"
    server.private_key_pem.write_to_path(str(key))
    server.cert_chain_pems[0].write_to_path(str(chain))
    ca.cert_pem.write_to_path(str(ca_file))

    trusted = _python(_FETCH, str(chain), str(key), env=_env(SSL_CERT_FILE=str(ca_file)))
    assert trusted.strip() == "200 hello over TLS"
    refused = _python(_FETCH, str(chain), str(key), env=_env(SSL_CERT_FILE=None))
    assert refused.startswith("certificate refused:")
    assert "CERTIFICATE_VERIFY_FAILED" in refused
