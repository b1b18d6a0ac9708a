"""A proxy in front of the moto S3 server that fails chosen requests on purpose: an HTTP error
with an S3 code (``(503, 'SlowDown')``), a reset connection (``'reset'``), a slow answer
(``('slow', seconds)``: waits, then forwards) or a body cut short (``('cut', nbytes)``: the
server's status and headers, then ``nbytes`` of the body, then the connection ends).

``faulty_proxy`` (a fixture, with ``moto_endpoint``) gives a :class:`FaultyProxy`;
``proxy.fail(match, action, times)`` makes the next ``times`` requests (all when None) for
which ``match(method, path)`` is true get ``action``; ``proxy.count(method, part)`` counts the
requests seen; ``proxy.ranges`` lists ``(method, path, Range header or None)`` of each.

Example:
    >>> def test_retry(faulty_proxy, bucket):
    ...     faulty_proxy.fail(lambda m, p: m == 'PUT', (503, 'SlowDown'), times=2)
"""

from __future__ import annotations

import http.client
import http.server
import socket
import struct
import threading
import time
from collections.abc import Callable

import pytest

ERROR_BODY = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
    "<Message>failing on purpose</Message><RequestId>treadle-test</RequestId></Error>"
)
_HOP = {"transfer-encoding", "connection", "content-length", "date", "server", "expect"}


class FaultyProxy:
    """See the module's docstring."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.removeprefix("http://")
        self.requests: list[tuple[str, str, object]] = []
        self.ranges: list[tuple[str, str, str | None]] = []
        self._faults: list[list] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while size := int(self.rfile.readline().split(b";")[0], 16):
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                    self.rfile.readline()
                    return b"".join(chunks)
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _handle(self) -> None:
                body = self._body()
                action = proxy._decide(self.command, self.path, self.headers.get("Range"))
                if action == "reset":
                    # SO_LINGER 0: the connection ends with a TCP reset, as a crashed server's.
                    linger = struct.pack("ii", 1, 0)
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                    self.connection.close()
                    self.close_connection = True
                    return
                if isinstance(action, tuple) and action[0] == "slow":
                    time.sleep(action[1])
                elif isinstance(action, tuple) and action[0] == "cut":
                    self._forward(body, cut=action[1])
                    return
                elif action is not None:
                    status, code = action
                    payload = ERROR_BODY.format(code=code).encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(payload)
                    return
                self._forward(body)

            def _forward(self, body: bytes, cut: int | None = None) -> None:
                connection = http.client.HTTPConnection(proxy.upstream, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                headers["Content-Length"] = str(len(body))
                connection.request(self.command, self.path, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read()
                connection.close()
                try:
                    self.send_response(response.status)
                    for name, value in response.getheaders():
                        if name.lower() not in _HOP:
                            self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(data if cut is None else data[:cut])
                    if cut is not None:  # the body ends early: the connection goes
                        self.wfile.flush()
                        self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (slow)
                    self.close_connection = True

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def fail(self, match: Callable[[str, str], bool], action: object, times: int | None) -> None:
        with self._lock:
            self._faults.append([match, action, times])

    def _decide(self, method: str, path: str, range_: str | None = None) -> object:
        with self._lock:
            self.ranges.append((method, path, range_))
            action = None
            for fault in self._faults:
                match, what, times = fault
                if match(method, path) and (times is None or times > 0):
                    if times is not None:
                        fault[2] = times - 1
                    action = what
                    break
            self.requests.append((method, path, action))
            return action

    def count(self, method: str, part: str) -> int:
        with self._lock:
            return sum(1 for m, p, _ in self.requests if m == method and part in p)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def faulty_proxy(moto_endpoint):
    proxy = FaultyProxy(moto_endpoint)
    yield proxy
    proxy.close()
