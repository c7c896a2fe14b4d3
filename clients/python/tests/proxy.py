"""A TCP proxy in front of the service that misbehaves on purpose, once.

``cut``: the first connection's request reaches the service, but its answer is dropped and the
connection closed (the client cannot know whether the write happened). ``rate_limit``: the
first connection is answered 429 with ``Retry-After`` without reaching the service. ``stall``:
connections are accepted and never answered. After the first connection (except ``stall``)
bytes pass through untouched.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import List, Optional, Tuple
from urllib.parse import urlsplit


class FaultyProxy:
    def __init__(self, upstream_url: str, mode: str, retry_after: int = 2) -> None:
        parts = urlsplit(upstream_url)
        self.upstream: Tuple[str, int] = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.mode = mode
        self.retry_after = retry_after
        self.connections = 0
        self.requests: List[Tuple[float, str]] = []  # (time, request line) of what the proxy saw first on each connection
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._lock = threading.Lock()
        self._open: List[socket.socket] = []
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._stop = True
        self._sock.close()
        with self._lock:
            for s in self._open:
                try:
                    s.close()
                except OSError:
                    pass

    def __enter__(self) -> "FaultyProxy":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._stop:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                first = self.connections == 1
                self._open.append(conn)
            threading.Thread(target=self._serve, args=(conn, first), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> bytes:
        """One whole request (head and Content-Length body) from the client."""
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return data
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(rest) < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            rest += chunk
        with self._lock:
            self.requests.append((time.monotonic(), head.split(b"\r\n")[0].decode("latin1")))
        return head + b"\r\n\r\n" + rest

    def _serve(self, conn: socket.socket, first: bool) -> None:
        try:
            if self.mode == "stall":
                self._read_request(conn)
                while conn.recv(65536):
                    pass
                return
            if first and self.mode == "rate_limit":
                self._read_request(conn)
                body = b'{"detail":"too many requests","code":"rate_limited"}'
                conn.sendall(
                    b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
                    + f"Retry-After: {self.retry_after}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                    + body
                )
                return
            up = socket.create_connection(self.upstream)
            with self._lock:
                self._open.append(up)
            if first and self.mode == "cut":
                up.sendall(self._read_request(conn))
                # The service has the whole request; wait for its answer to start, then drop it.
                up.recv(1)
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                return
            self._log_first_line(conn, up)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def _log_first_line(self, conn: socket.socket, up: socket.socket) -> None:
        """Passes bytes both ways until either side closes, noting each request line it sees start a packet."""

        def pump(src: socket.socket, dst: socket.socket, note: bool) -> None:
            try:
                while True:
                    chunk = src.recv(65536)
                    if not chunk:
                        break
                    if note and chunk[:8].split(b" ")[0] in (b"GET", b"POST", b"PATCH", b"DELETE", b"PUT"):
                        with self._lock:
                            self.requests.append((time.monotonic(), chunk.split(b"\r\n")[0].decode("latin1")))
                    dst.sendall(chunk)
            except OSError:
                pass
            finally:
                for s in (src, dst):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        back = threading.Thread(target=pump, args=(up, conn, False), daemon=True)
        back.start()
        pump(conn, up, True)
        back.join()
        up.close()


def request_lines(proxy: FaultyProxy, prefix: str) -> List[str]:
    return [line for _, line in proxy.requests if line.startswith(prefix)]


def first_time(proxy: FaultyProxy, prefix: str) -> Optional[float]:
    for t, line in proxy.requests:
        if line.startswith(prefix):
            return t
    return None
