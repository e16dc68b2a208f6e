"""aiohttp, imported so that its TLS contexts read the CA certificates on their first handshake, not at import.

aiohttp builds two module-level SSL contexts when it is imported, and each reads the system's CA bundle:
35 ms apiece with OpenSSL 3, 70 ms of every run's start-up, though most runs speak plain HTTP to a local
server. Here aiohttp is imported with OpenSSL's bundle location (``SSL_CERT_FILE``) pointed at an empty
file, and every SSL context the import left in a module's globals becomes a ``DeferredCAContext``: the
same object, options and verification, which loads the default certificates (``SSL_CERT_FILE`` and
``SSL_CERT_DIR`` as the user set them, else the system's) before its first handshake. Other users of
aiohttp in the process (LiteLLM) get the same verified contexts.

Import aiohttp from here (``from structbench.backends.http import aiohttp``); where aiohttp was already
imported, its contexts hold the certificates already and nothing changes.
"""

from __future__ import annotations

import os
import ssl
import sys
import threading
from typing import Any

_LOCK = threading.Lock()
_CA_FILE = "SSL_CERT_FILE"


class DeferredCAContext(ssl.SSLContext):
    """An SSL context that loads the default CA certificates before its first handshake (or inspection)."""

    def _with_certificates(self) -> None:
        if not self.__dict__.get("_ca_loaded"):
            with _LOCK:
                if not self.__dict__.get("_ca_loaded"):
                    self.load_default_certs()  # what ``create_default_context`` did, with the bundle left out
                    self.__dict__["_ca_loaded"] = True

    def wrap_socket(self, *args: Any, **kwargs: Any) -> Any:
        self._with_certificates()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> Any:
        self._with_certificates()
        return super().wrap_bio(*args, **kwargs)

    def get_ca_certs(self, binary_form: bool = False) -> Any:
        self._with_certificates()
        return super().get_ca_certs(binary_form)

    def cert_store_stats(self) -> Any:
        self._with_certificates()
        return super().cert_store_stats()


def _import_deferred() -> None:
    """Import aiohttp with an empty CA bundle, then make the contexts the import built load theirs when used."""
    before = set(sys.modules)
    user_file = os.environ.get(_CA_FILE)
    os.environ[_CA_FILE] = os.devnull
    try:
        import aiohttp  # noqa: F401  (the import is the point: its contexts are built now, without the bundle)
    finally:
        if user_file is None:
            del os.environ[_CA_FILE]
        else:
            os.environ[_CA_FILE] = user_file
    for name in set(sys.modules) - before:
        for value in list(getattr(sys.modules[name], "__dict__", {}).values()):
            if type(value) is ssl.SSLContext:
                try:
                    value.__class__ = DeferredCAContext
                except TypeError:  # a Python whose contexts cannot change class: read the bundle now, as aiohttp did
                    value.load_default_certs()


if "aiohttp" not in sys.modules:
    _import_deferred()

import aiohttp  # noqa: E402  (imported by ``_import_deferred`` above; this names it for the modules that import it here)

__all__ = ["aiohttp"]
