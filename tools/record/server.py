"""The scripted model server: one HTTP server on 127.0.0.1, every provider API the dialects
speak, every request and answer logged as a JSON line.

    with Recorder(scenario, log_path) as rec:
        env = {"ANTHROPIC_BASE_URL": rec.url, ...}
        rec.phase("turn 1")            # a label every later log line carries
        subprocess.run([...], env=env)

The log holds one line per request: ``n`` (its order), ``phase``, ``method``, ``path``,
``dialect``, ``kind`` (``turn``, ``compaction``, ``side``, or what a dialect names a request
that is not a model call, such as ``count_tokens``; ``unknown`` for a path no dialect
serves), ``request`` (the JSON body as sent; a top-level field equal to one an earlier line
holds is written ``{"$ref": N}``, N that line's ``n``, to keep logs small), ``call`` (the
neutral view, ``script.Call.as_json``) and ``answer`` (``script.Answer.as_json``).
"""

from __future__ import annotations

import gzip
import json
import select
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from .script import Answer, Call, Meter, Scenario

DEDUPED = ("tools", "system", "instructions", "systemInstruction", "toolConfig", "tool_choice")


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any  # parsed JSON, or None


@dataclass
class Reply:
    status: int = 200
    body: bytes = b"{}"
    content_type: str = "application/json"
    #: More response headers (the Anthropic dialect's ``request-id``, which agents write down).
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, obj: Any, status: int = 200) -> Reply:
        return cls(status, json.dumps(obj).encode())

    @classmethod
    def sse(cls, events: Iterable[tuple[str | None, Any]]) -> Reply:
        """Server-sent events, sent whole (the answer is known before the first byte)."""
        chunks = []
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            payload = data if isinstance(data, str) else json.dumps(data)
            chunks.append(f"{head}data: {payload}\n\n")
        return cls(200, "".join(chunks).encode(), "text/event-stream")


class Dialect(Protocol):
    name: str

    def match(self, method: str, path: str) -> bool: ...

    def handle(self, req: Request, model: Model) -> Reply: ...


class Model:
    """What a dialect asks of the server: an answer to a call (logged), or a log line for a
    request that is not a model call."""

    def __init__(self, scenario: Scenario, log: Path, turn_delay: float = 0.0) -> None:
        self.scenario = scenario
        self.turn_delay = turn_delay
        self.meter = Meter()
        self._log = log
        self._lock = threading.RLock()  # one call answered and logged at a time
        self._n = 0
        self._ids = 0
        self._seen: dict[str, int] = {}
        self.phase = ""
        #: kinds of call whose answer is held until the client hangs up (:meth:`Recorder.hold`)
        self.hold_kinds: frozenset[str] = frozenset()
        self.local = threading.local()  # the held answer's ``n``, for the handler's thread

    def answer(self, req: Request, dialect: str, call: Call) -> Answer:
        if self.turn_delay and self.scenario.kind_of(call) == "turn":
            time.sleep(self.turn_delay)  # a compaction sent beside it is answered first
        with self._lock:
            answer = self.scenario.decide(call, self._next_id)
            answer.usage = self.meter.measure(call, answer)
            answer.n = self._n
            self.local.held = answer.n if answer.kind in self.hold_kinds else None
            self.write(req, dialect, answer.kind, call=call.as_json(), answer=answer.as_json())
            return answer

    def hung_up(self, n: int) -> None:
        """Log that the client went away before the held answer ``n`` was sent."""
        with self._lock, self._log.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"phase": self.phase, "kind": "hangup", "of": n}) + "\n")

    def write(self, req: Request, dialect: str, kind: str, **extra: Any) -> None:
        with self._lock:
            line = {
                "n": self._n,
                "phase": self.phase,
                "method": req.method,
                "path": req.path,
                "dialect": dialect,
                "kind": kind,
                "request": self._dedupe(req.body),
                **extra,
            }
            self._n += 1
            with self._log.open("a", encoding="utf-8") as f:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")

    def _dedupe(self, body: Any) -> Any:
        if not isinstance(body, dict):
            return body
        out = dict(body)
        for key in DEDUPED:
            if key in out:
                text = key + "\0" + json.dumps(out[key], sort_keys=True)
                if text in self._seen:
                    out[key] = {"$ref": self._seen[text]}
                else:
                    self._seen[text] = self._n
        return out

    def _next_id(self) -> str:
        with self._lock:
            self._ids += 1
            return f"call_rec{self._ids:05d}"


class Recorder:
    """The server, started on a free port of 127.0.0.1 for the length of a ``with``."""

    def __init__(
        self,
        scenario: Scenario,
        log: Path,
        dialects: list[Dialect] | None = None,
        turn_delay: float = 0.0,
    ):
        """``turn_delay``: seconds every turn call waits before it is answered, for an agent
        that sends a compaction in the background beside its next turn call (Copilot CLI):
        the compaction, sent first by a few milliseconds, is then logged and answered first on
        every run, and what follows is the same."""
        from .dialects import ALL

        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("")
        self.model = Model(scenario, log, turn_delay)
        self.dialects = dialects if dialects is not None else ALL
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def phase(self, label: str, hold: tuple[str, ...] = ()) -> None:
        """Label the calls that follow; ``hold``: kinds of call (``compaction``) whose answer
        is held until the client hangs up (at most :data:`HOLD_SECONDS`), then logged as a
        ``hangup``. An agent that starts a compaction in the background and cancels it when
        it exits then writes the same file on every run (the race between the answer and the
        exit made its usage recorded on some runs and not on others)."""
        self.model.phase = label
        self.model.hold_kinds = frozenset(hold)

    def __enter__(self) -> Recorder:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def route(self, req: Request) -> Reply:
        for d in self.dialects:
            if d.match(req.method, req.path):
                return d.handle(req, self.model)
        self.model.write(req, "", "unknown")
        return Reply.json({"error": {"message": f"no route for {req.path}"}}, 404)


def _handler(rec: Recorder) -> Callable[..., BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            raw = _decode(self._read(), self.headers.get("Content-Encoding", ""))
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = {"$text": raw.decode("utf-8", "replace")}
            headers = {k.lower(): v for k, v in self.headers.items()}
            req = Request(self.command, parts.path, parse_qs(parts.query), headers, body)
            try:
                reply = rec.route(req)
            except Exception as e:  # a dialect's bug: answer 500 and log it, never hang
                rec.model.write(req, "", "error", error=repr(e))
                reply = Reply.json({"error": {"message": repr(e)}}, 500)
            held, rec.model.local.held = getattr(rec.model.local, "held", None), None
            if held is not None and _hangs_up(self.connection, HOLD_SECONDS):
                rec.model.hung_up(held)
                self.close_connection = True
                return
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)

        def _read(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                out = b""
                while True:
                    size = int(self.rfile.readline().strip().split(b";")[0], 16)
                    if size == 0:
                        self.rfile.readline()
                        return out
                    out += self.rfile.read(size)
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    return Handler


#: The longest an answer is held waiting for the client to hang up.
HOLD_SECONDS = 120.0


def _hangs_up(sock: socket.socket, seconds: float) -> bool:
    """Whether the client closes ``sock`` within ``seconds`` (an end of file to read)."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        ready, _, _ = select.select([sock], [], [], min(left, 0.5))
        if ready:
            try:
                return sock.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                return True
    return False


def _decode(raw: bytes, encoding: str) -> bytes:
    encoding = encoding.lower().strip()
    if encoding == "gzip":
        return gzip.decompress(raw)
    if encoding == "deflate":
        return zlib.decompress(raw)
    if encoding == "br":
        import brotli

        return bytes(brotli.decompress(raw))
    if encoding == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(raw)
    return raw
