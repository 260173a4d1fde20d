"""eAPI over one HTTPS connection per device, kept open between requests.

pyeapi closes its socket after every request, so each eAPI request paid a TCP connect and a TLS handshake: two
round trips before the request is sent, and on the client a handshake's CPU (most of the eAPI cost of a check of
a large site). EOS's web server keeps HTTP/1.1 connections alive, as ANTA's eAPI client (httpx) relies on;
this connection class, given to NAPALM's eos driver as its `transport`, keeps the socket and sends the next
request on it.

A kept connection the server has since closed (its idle timeout) fails on the next request before any reply:
then, and only then (a reused socket the server closed: the write refused or no status line), it is sent once more
on a fresh connection; it cannot have run, the server having read nothing. Any other failure is raised as
pyeapi raises it, the socket dropped.
"""

from __future__ import annotations

import http.client
import ssl
import time
from collections.abc import Callable
from typing import Any

from pyeapi.eapilib import ConnectionError as EapiConnectionError
from pyeapi.eapilib import HttpsConnection, HttpsEapiConnection

# A connection idle longer than this is closed before the next request rather than reused: below the idle
# timeouts of common servers (nginx 75 s, aiohttp 75 s), so a reuse rarely meets a socket the server dropped
IDLE_REUSE_S = 30.0

# The failures of a reused socket that mean the server closed it before reading the request
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, ssl.SSLEOFError,
          ssl.SSLZeroReturnError)


class _KeptHttpsConnection(HttpsConnection):
    """pyeapi's HTTPS connection whose close() after a whole reply keeps the socket (shut() closes it). A close
    http.client itself makes while reading the reply (the server said `Connection: close`, or the reply broke
    off) still closes."""

    _reading = False

    def getresponse(self) -> http.client.HTTPResponse:
        self._reading = True
        try:
            return super().getresponse()
        finally:
            self._reading = False

    def close(self) -> None:
        if self._reading or self.sock is None:
            super().close()

    def shut(self) -> None:
        super().close()


class PersistentHttpsEapiConnection(HttpsEapiConnection):
    """HttpsEapiConnection reusing one socket across requests (see the module docstring)."""

    def __init__(self, host: str, port: int | None = None, path: str | None = None, username: str | None = None,
                 password: str | None = None, context: Any = None, timeout: int = 60,
                 clock: Callable[[], float] = time.monotonic, **kwargs: Any):
        super().__init__(host, port=port, path=path, username=username, password=password, context=context,
                         timeout=timeout, **kwargs)
        plain: Any = self.transport
        self.transport: _KeptHttpsConnection = _KeptHttpsConnection(
            plain.path, plain.host, plain.port, context=plain._context, timeout=plain.timeout)
        self._clock = clock
        self._last_used: float | None = None

    def send(self, data: str) -> Any:
        if self.transport.sock is not None and self._last_used is not None \
                and self._clock() - self._last_used > IDLE_REUSE_S:
            self.transport.shut()
        reused = self.transport.sock is not None
        try:
            return self._send_once(data)
        except EapiConnectionError:
            if not (reused and isinstance(self.socket_error, _STALE)):
                raise
        return self._send_once(data)      # the server had closed the kept socket: once more on a new one

    def _send_once(self, data: str) -> Any:
        try:
            return super().send(data)
        except BaseException:
            self.transport.shut()
            raise
        finally:
            self._last_used = self._clock()

    def close(self) -> None:
        """Close the kept socket (NAPALM's driver close() calls it)."""
        self.transport.shut()
