"""The lifecycle the tests' local HTTP servers share (tests/helpers/llm_server.py, tests/oidc_server.py): a
ThreadingHTTPServer on a free 127.0.0.1 port, served by a daemon thread, started and stopped by
hand or by a ``with`` block."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # socketserver's 5 drops connections when 64 clients connect at once


class LoopbackServer:
    """Subclasses give the request handler (:meth:`handler`) and the thread's name."""

    thread_name = "loopback-server"
    _httpd: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def start(self) -> Self:
        self._httpd = _Server(("127.0.0.1", 0), self.handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>`` of the running server."""
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"
