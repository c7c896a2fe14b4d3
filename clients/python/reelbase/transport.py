"""HTTP with timeouts, a thread-safe pool of keep-alive connections, and retries.

A request is retried (with exponential backoff and jitter, or after the ``Retry-After`` the
service asked for) when the connection fails, breaks or times out, and on 429, 502, 503 and
504 — but only when a retry cannot repeat a write: reads, and POSTs that carry an
``Idempotency-Key`` (the service answers a repeated key with its first answer and writes
nothing; a 409 ``idempotency_in_progress``, the first attempt still running, is asked again the
same way). A PATCH or DELETE is retried only when it certainly never reached the service (the
connection could not be opened) or was refused with 429.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import logging
import random
import select
import socket
import ssl
import threading
import time
import weakref
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple
from urllib.parse import urlencode, urlsplit

from .errors import ConnectionFailed, ReelbaseError, error_from_response

log = logging.getLogger("reelbase")

RETRY_STATUSES = frozenset((429, 502, 503, 504))
#: A pooled connection idle longer than this is closed instead of reused (the service keeps them longer).
MAX_IDLE_SECONDS = 20.0

Send = Callable[[bytes], None]
#: Writes a request body through ``send``; called once per attempt so a retry sends it again.
BodyWriter = Callable[[Send], None]


class Response:
    """A finished answer: status, headers (case-insensitive) and the decoded JSON body."""

    __slots__ = ("status", "headers", "data")

    def __init__(self, status: int, headers: http.client.HTTPMessage, data: Any) -> None:
        self.status = status
        self.headers = headers
        self.data = data


class _Connection:
    __slots__ = ("conn", "last_used")

    def __init__(self, conn: http.client.HTTPConnection) -> None:
        self.conn = conn
        self.last_used = time.monotonic()


class _NotSent(Exception):
    """The connection could not be opened: the request never left this process."""


def retry_after_seconds(value: Optional[str]) -> Optional[float]:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


class Transport:
    """Sends requests to one base URL. Safe to share between threads."""

    def __init__(
        self,
        base_url: str,
        connect_timeout: float = 10.0,
        read_timeout: float = 30.0,
        retries: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 10.0,
        max_retry_after: float = 120.0,
        pool_size: int = 16,
        user_agent: str = "reelbase-python",
        ssl_context: Optional[ssl.SSLContext] = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base URL must be http:// or https:// with a host, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self._pool_size = pool_size
        self._user_agent = user_agent
        self._ssl = ssl_context
        self._idle: List[_Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        # A client dropped without close() still closes its idle connections.
        weakref.finalize(self, _close_idle, self._idle)

    # -- connections -----------------------------------------------------------------------

    def _open(self) -> _Connection:
        if self._https:
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                self._host, self._port, timeout=self.connect_timeout, context=self._ssl or ssl.create_default_context()
            )
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=self.connect_timeout)
        try:
            conn.connect()
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            raise _NotSent(err) from err
        assert conn.sock is not None
        conn.sock.settimeout(self.read_timeout)
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return _Connection(conn)

    def _acquire(self) -> Tuple[_Connection, bool]:
        """A pooled connection (reused=True) or a new one."""
        now = time.monotonic()
        with self._lock:
            while self._idle:
                c = self._idle.pop()
                if now - c.last_used < MAX_IDLE_SECONDS and not _dropped(c.conn):
                    return c, True
                c.conn.close()
        return self._open(), False

    def _release(self, c: _Connection) -> None:
        c.last_used = time.monotonic()
        with self._lock:
            if not self._closed and len(self._idle) < self._pool_size:
                self._idle.append(c)
                return
        c.conn.close()

    def close(self) -> None:
        """Closes every pooled connection (requests still running finish on theirs)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for c in idle:
            c.conn.close()

    # -- requests --------------------------------------------------------------------------

    def url_path(self, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
        full = self._prefix + path
        if query:
            pairs = [(k, _query_value(v)) for k, v in query.items() if v is not None]
            if pairs:
                full += "?" + urlencode(pairs)
        return full

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        json_body: Any = None,
        body: Optional[Tuple[int, BodyWriter]] = None,
        headers: Optional[Dict[str, str]] = None,
        auth: Optional[Callable[[], Optional[str]]] = None,
        retry_safe: bool,
        timeout: Optional[float] = None,
    ) -> Response:
        """Sends one request, retrying as the module says; returns 2xx answers, raises the rest.

        ``body`` is ``(length, writer)`` for a streamed body; ``auth`` returns the bearer token
        for each attempt; ``retry_safe`` says whether the request may be sent twice.
        """
        target = self.url_path(path, query)
        base_headers = {"Accept": "application/json", "User-Agent": self._user_agent}
        if headers:
            base_headers.update(headers)
        payload: Optional[bytes] = None
        if json_body is not None:
            payload = json.dumps(json_body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            base_headers["Content-Type"] = "application/json"
        attempt = 0
        refreshed = False
        while True:
            hdrs = dict(base_headers)
            token = auth() if auth else None
            if token:
                hdrs["Authorization"] = f"Bearer {token}"
            try:
                status, resp_headers, raw = self._attempt(method, target, hdrs, payload, body, timeout)
            except _NotSent as err:
                # Never reached the service: any request may go again.
                if attempt < self.retries:
                    self._pause(attempt, None, f"{method} {path}: cannot connect ({err.__cause__})")
                    attempt += 1
                    continue
                raise ConnectionFailed(f"cannot connect to {self.base_url}: {err.__cause__}", code="connection_failed") from err.__cause__
            except (OSError, http.client.HTTPException) as err:
                if retry_safe and attempt < self.retries:
                    self._pause(attempt, None, f"{method} {path}: connection broke ({err!r})")
                    attempt += 1
                    continue
                code = "timeout" if isinstance(err, socket.timeout) else "connection_failed"
                raise ConnectionFailed(f"{method} {path}: no answer from {self.base_url}: {err!r}", code=code) from err
            data = _decode(raw, resp_headers)
            log.debug("%s %s -> %s", method, path, status)
            if 200 <= status < 300:
                return Response(status, resp_headers, data)
            wait = retry_after_seconds(resp_headers.get("Retry-After"))
            if status == 409 and "Idempotency-Key" in base_headers and _code(data) == "idempotency_in_progress" and attempt < self.retries:
                # The first attempt with this key is still running on the service: ask again for its answer.
                self._pause(attempt, wait, f"{method} {path}: the first attempt is still running")
                attempt += 1
                continue
            if status in RETRY_STATUSES and (retry_safe or status == 429) and attempt < self.retries:
                if wait is None or wait <= self.max_retry_after:
                    self._pause(attempt, wait, f"{method} {path}: {status}")
                    attempt += 1
                    continue
            if status == 401 and not refreshed and getattr(auth, "refresh", None) is not None:
                # A login token that expired: log in again once and resend.
                refreshed = True
                if auth.refresh(token):  # type: ignore[union-attr]
                    continue
            raise error_from_response(status, data, resp_headers, retry_after=wait)

    def _pause(self, attempt: int, wait: Optional[float], why: str) -> None:
        if wait is None:
            wait = random.uniform(0, min(self.max_backoff, self.backoff * (2**attempt)))
        log.info("retrying in %.2f s (attempt %d of %d): %s", wait, attempt + 2, self.retries + 1, why)
        time.sleep(wait)

    def _attempt(
        self,
        method: str,
        target: str,
        headers: Dict[str, str],
        payload: Optional[bytes],
        body: Optional[Tuple[int, BodyWriter]],
        timeout: Optional[float],
    ) -> Tuple[int, http.client.HTTPMessage, bytes]:
        c, reused = self._acquire()
        conn = c.conn
        ok = False
        try:
            if conn.sock is not None:
                conn.sock.settimeout(timeout if timeout is not None else self.read_timeout)
            conn.putrequest(method, target, skip_accept_encoding=True)
            for k, v in headers.items():
                conn.putheader(k, v)
            if body is not None:
                conn.putheader("Content-Length", str(body[0]))
            elif payload is not None or method in ("POST", "PUT", "PATCH"):
                conn.putheader("Content-Length", str(len(payload or b"")))
            conn.endheaders()
            if body is not None:
                try:
                    body[1](conn.send)
                except (BrokenPipeError, ConnectionResetError):
                    # The service may have answered early (a 404 or 413 before the body was read):
                    # that answer, when it can still be read, says more than the broken pipe.
                    pass
            elif payload:
                conn.send(payload)
            resp = conn.getresponse()
            raw = resp.read()
            ok = not resp.will_close
            return resp.status, resp.headers, raw
        except (OSError, http.client.HTTPException):
            if reused and not ok:
                log.debug("pooled connection failed on %s %s", method, target)
            raise
        finally:
            if ok:
                self._release(c)
            else:
                conn.close()


def _close_idle(idle: List[_Connection]) -> None:
    for c in idle:
        c.conn.close()


def _dropped(conn: http.client.HTTPConnection) -> bool:
    """True when an idle connection was closed by the service (it is readable: an EOF or a reset)."""
    sock = conn.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _code(data: Any) -> Optional[str]:
    return data.get("code") if isinstance(data, dict) else None


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _decode(raw: bytes, headers: http.client.HTTPMessage) -> Any:
    if not raw:
        return None
    ctype = headers.get("Content-Type", "")
    if "json" in ctype:
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError as err:
            raise ReelbaseError(f"the service answered malformed JSON: {err}") from err
    return raw.decode("utf-8", "replace")
