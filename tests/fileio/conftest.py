"""Fixtures of the treadle-fileio tests: a loopback S3 server (moto), buckets, a proxy that
fails on purpose, and registries restored after each test.

boto3 and moto are optional: the S3 fixtures skip their tests when either is missing, so the
rest runs in an environment with nothing but treadle-fileio installed.
"""

from __future__ import annotations

import contextlib
import http.client
import http.server
import socket
import struct
import threading

import pytest
from s3_server import moto_endpoint, new_bucket, use_moto  # noqa: F401 (a fixture)

from treadle.fileio import backends, file_handlers
from treadle.fileio.backends import registry_utils

ERROR_BODY = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    "<Error><Code>{code}</Code><Message>failing on purpose</Message>"
    "<RequestId>treadle-test</RequestId></Error>"
)


@pytest.fixture(autouse=True)
def restore_registries():
    """Backends and handlers a test registers do not outlive it."""
    saved = (
        dict(backends.backends),
        dict(backends.prefix_to_backends),
        dict(file_handlers),
        dict(registry_utils.backend_instances),
    )
    yield
    for target, snapshot in zip(
        (
            backends.backends,
            backends.prefix_to_backends,
            file_handlers,
            registry_utils.backend_instances,
        ),
        saved,
        strict=True,
    ):
        target.clear()
        target.update(snapshot)


@pytest.fixture
def s3_env(moto_endpoint, monkeypatch, tmp_path):  # noqa: F811 (the imported fixture)
    """AWS configuration from the environment only, pointing at the moto server."""
    use_moto(moto_endpoint, monkeypatch, tmp_path)
    return moto_endpoint


@pytest.fixture
def s3_client(s3_env):
    """A plain boto3 client on the moto server, to check what the backend did."""
    import boto3

    return boto3.client("s3", endpoint_url=s3_env)


@pytest.fixture
def bucket(s3_env) -> str:
    """A new, empty bucket."""
    return new_bucket(s3_env)


class FaultyProxy:
    """An HTTP proxy to the moto server that fails chosen requests on purpose.

    ``fail(match, action, times)`` makes the next ``times`` requests for which
    ``match(method, path)`` is true (every one, when ``times`` is None) get ``action``:
    an HTTP status with an S3 error code (``(503, 'SlowDown')``) or ``'reset'`` (the
    connection is reset, no answer). ``requests`` logs ``(method, path, outcome)``.
    """

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.removeprefix("http://")
        self.requests: list[tuple[str, str, object]] = []
        self._faults: list[list] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _read_body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0], 16)
                        chunk = self.rfile.read(size)
                        self.rfile.readline()
                        if not size:
                            return b"".join(chunks)
                        chunks.append(chunk)
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _handle(self) -> None:
                body = self._read_body()
                action = proxy._decide(self.command, self.path)
                if action == "reset":
                    # SO_LINGER 0: close with a TCP reset, as a crashed server would.
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                    )
                    self.connection.close()
                    self.close_connection = True
                    return
                if action is not None:
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

            def _forward(self, body: bytes) -> None:
                connection = http.client.HTTPConnection(proxy.upstream, timeout=60)
                skip = {"expect", "transfer-encoding", "content-length", "connection"}
                headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
                headers["Content-Length"] = str(len(body))
                connection.request(self.command, self.path, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read()
                connection.close()
                self.send_response(response.status)
                for name, value in response.getheaders():
                    if name.lower() in (
                        "transfer-encoding",
                        "connection",
                        "content-length",
                        "date",
                        "server",
                    ):
                        continue
                    self.send_header(name, value)
                length = response.getheader("Content-Length") if self.command == "HEAD" else None
                self.send_header("Content-Length", length or str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

            def finish(self) -> None:
                with contextlib.suppress(OSError):  # the socket a 'reset' closed
                    super().finish()

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.handle_error = lambda request, address: None
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def fail(self, match, action, times: int | None = 1) -> None:
        with self._lock:
            self._faults.append([match, action, times])

    def _decide(self, method: str, path: str) -> object:
        with self._lock:
            outcome = None
            for fault in self._faults:
                match, action, times = fault
                if (times is None or times > 0) and match(method, path):
                    if times is not None:
                        fault[2] -= 1
                    outcome = action
                    break
            self.requests.append((method, path, outcome))
            return outcome

    def count(self, method: str, fragment: str) -> int:
        with self._lock:
            return sum(1 for m, p, _ in self.requests if m == method and fragment in p)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def faulty_proxy(s3_env):
    proxy = FaultyProxy(s3_env)
    yield proxy
    proxy.close()
