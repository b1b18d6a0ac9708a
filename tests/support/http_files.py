"""A loopback http server of one directory, for the tests that download checkpoints (http(s)://,
torchvision://, open-mmlab://, mmcls://) without the network.

This module imports nothing but the standard library.

Example:
    >>> server = Server(tmp_path)
    >>> url = f'{server.url}/a.pth'  # serves tmp_path/a.pth
    >>> server.close()
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path


class Server:
    """A loopback http server of the directory ``root`` that records the path of each request
    (``requests``), to tell a download from a cached file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[str] = []
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server.requests.append(self.path)
                super().do_GET()

        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Handler, directory=str(root))
        )
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
