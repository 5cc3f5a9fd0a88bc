"""A small loopback HTTP fake with per-operation fault injection and latency.

Each fake service declares routes ``(method, regex) -> (op name, handler)``. Tests inject faults by
op name (``"*"`` for every op): an HTTP error ``n`` times or forever, or a slow answer (timeout).
Servers bind 127.0.0.1 on an ephemeral port, read bounded bodies and stop cleanly.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

MAX_BODY = 1 << 20  # fakes refuse larger request bodies
MAX_DELAY = 10.0  # no injected delay sleeps longer than this


@dataclass
class Request:
    """What a handler sees."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    match: re.Match[str]

    def json(self) -> Any:
        return json.loads(self.body or b"{}")


# A handler returns (status, JSON body, extra headers).
Response = tuple[int, Any, dict[str, str]]
Handler = Callable[[Request], Response]


@dataclass
class Fault:
    """A fault for op ``op``: ``response`` (or a ``delay``) on the next ``times`` calls (None: all)."""

    op: str
    response: Response | None
    times: int | None = None
    delay: float = 0.0


class FakeService:
    """Base class: routing, call counting, latency and faults."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.calls: Counter[str] = Counter()
        self.faults: list[Fault] = []
        self.lock = threading.RLock()
        self.routes: list[tuple[str, re.Pattern[str], str, Handler]] = []
        # The quota project each request named (Google's x-goog-user-project header; None: none).
        self.user_projects: list[str | None] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- setup ---------------------------------------------------------------------------------
    def route(self, method: str, pattern: str, op: str, handler: Handler) -> None:
        """Register ``handler`` for ``method`` on paths matching ``pattern`` (full match)."""
        self.routes.append((method, re.compile(pattern), op, handler))

    def start(self, tls: Any = None) -> str:
        """Start serving; returns ``http://127.0.0.1:PORT`` (``https://`` with ``tls``, an
        ``ssl.SSLContext`` for the server side: a client then takes it for a real endpoint)."""
        service = self
        self._tls = tls

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: with Nagle's algorithm the body waits for
            # the client's delayed ACK (~40 ms a response on Linux).
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                del format, args

            def _do(self) -> None:
                service._dispatch(self)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _do

        class _Server(ThreadingHTTPServer):
            # The default listen backlog (5) drops connections beyond it when a client opens
            # many at once (--where reads 16 regions concurrently); Linux retries a dropped SYN
            # only after 1 s, which would look like a slow cloud.
            request_queue_size = 128

        self._server = _Server(("127.0.0.1", 0), _H)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._server.daemon_threads = True
        # stop() waits for the loop to notice the shutdown: poll often (the default is 0.5 s)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self.url

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"{'https' if getattr(self, '_tls', None) else 'http'}://{host}:{port}"

    def stop(self) -> None:
        """Stop serving."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # --- faults --------------------------------------------------------------------------------
    def inject(
        self,
        op: str,
        response: Response | None = None,
        times: int | None = None,
        delay: float = 0.0,
    ) -> None:
        """Answer ``op`` (``"*"``: any op) with ``response`` / after ``delay`` for ``times`` calls."""
        with self.lock:
            self.faults.append(Fault(op, response, times, min(delay, MAX_DELAY)))

    def reset(self) -> None:
        """Clear faults and call counts (state is the subclass's)."""
        with self.lock:
            self.faults.clear()
            self.calls.clear()
            self.user_projects.clear()

    def _fault_for(self, op: str) -> Fault | None:
        with self.lock:
            for f in self.faults:
                if f.op in (op, "*") and (f.times is None or f.times > 0):
                    if f.times is not None:
                        f.times -= 1
                    return f
        return None

    # --- serving -------------------------------------------------------------------------------
    def _dispatch(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._send(h, (413, {"message": "body too large"}, {}))
            return
        body = h.rfile.read(length) if length else b""
        for method, pattern, op, handler in self.routes:
            m = pattern.fullmatch(parts.path) if method == h.command else None
            if m is None:
                continue
            req = Request(h.command, parts.path, parse_qs(parts.query), dict(h.headers), body, m)
            op = self.op_name(op, req)
            with self.lock:
                self.calls[op] += 1
                self.user_projects.append(h.headers.get("x-goog-user-project"))
            if self.latency:
                time.sleep(self.latency)
            refused = self.guard(op, req)
            if refused is not None:
                self._send(h, refused)
                return
            fault = self._fault_for(op)
            if fault is not None and fault.delay:
                time.sleep(fault.delay)
            if fault is not None and fault.response is not None:
                self._send(h, fault.response)
                return
            with self.lock:
                resp = handler(req)
            self._send(h, resp)
            return
        self._send(h, self.not_found(h.command, parts.path))

    def guard(self, op: str, req: Request) -> Response | None:
        """Hook: an answer the service gives before any handler (a refused caller); None: go on."""
        del op, req
        return None

    def op_name(self, op: str, req: Request) -> str:
        """Hook: the op name of a request (AWS JSON routes by header)."""
        del req
        return op

    def not_found(self, method: str, path: str) -> Response:
        """Hook: answer for unrouted requests."""
        return 404, {"error": {"code": 404, "message": f"no route {method} {path}"}}, {}

    def _send(self, h: BaseHTTPRequestHandler, resp: Response) -> None:
        status, payload, shared = resp
        headers = dict(shared)  # responses may be module-level constants reused by every call
        # bytes: a body already encoded (EC2's XML, or an answer relayed from another server)
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        try:
            h.send_response(status)
            h.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
            for k, v in headers.items():
                h.send_header(k, v)
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests)
