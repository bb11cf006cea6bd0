"""The asyncio client: `AsyncLeapEnv`. Real asyncio I/O (asyncio.open_connection, HTTP/1.1 with
keep-alive) on the caller's event loop: no threads, nothing blocks the loop. Up to
`max_connections` requests are on the wire at once, each on its own kept-alive connection; more
wait for a free one, so thousands of episodes can await calls on one loop.

    async with AsyncLeapEnv("http://127.0.0.1:8420") as env:
        verdicts = await asyncio.gather(*(env.check("vector_add", s) for s in sources))

A client belongs to the event loop it first ran on (asyncio's streams do).
"""
from __future__ import annotations

import asyncio
import ssl
from typing import List, Optional, Sequence

from . import _core
from ._core import LeapError, Retry
from .types import Group, Health, Task, TaskSummary, Verdict

_MAX_HEADER_LINES = 100


class _Conn:
    __slots__ = ("reader", "writer")

    def __init__(self, reader, writer):
        self.reader = reader
        self.writer = writer

    def usable(self):
        return not self.writer.is_closing() and not self.reader.at_eof()

    def close(self):
        try:
            self.writer.close()
        except Exception:  # already gone
            pass


class _NoAnswer(Exception):
    """The connection ended before any byte of an answer came back."""


class AsyncLeapEnv:
    """The asyncio twin of LeapEnv: the same calls, coroutines, the same typed results and
    retries (await asyncio.sleep, never time.sleep)."""

    def __init__(self, url=_core.DEFAULT_URL, token=None, timeout=900.0, retries=8, cafile=None,
                 backoff=0.5, max_connections=64, connect_timeout=30.0):
        if max_connections < 1:
            raise ValueError("max_connections must be >= 1")
        self._ep = _core.Endpoint(url, token, cafile)
        self.url = self._ep.url
        self.token = self._ep.token
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.retries = retries
        self.backoff = backoff
        self.max_connections = max_connections
        self._slots: Optional[asyncio.Semaphore] = None
        self._idle: List[_Conn] = []
        self._open: set = set()

    # --- the API (the same as LeapEnv's) ---
    async def health(self) -> Health:
        return _core.as_health(await self._call("GET", "/health", None, safe=True))

    async def tasks(self) -> List[TaskSummary]:
        return _core.as_tasks(await self._call("GET", "/v1/tasks", None, safe=True))

    async def task(self, name) -> Task:
        return _core.as_task(await self._call("GET", "/v1/tasks/" + _core.quote(name), None, safe=True))

    async def check(self, task, source=None, completion=None) -> Verdict:
        body = _core.text_body({"task": task}, source, completion)
        return _core.as_verdict(await self._call("POST", "/v1/check", body, safe=True))

    async def open_group(self, task, sources: Optional[Sequence[str]] = None,
                         completions: Optional[Sequence[str]] = None, tokens=None) -> Group:
        body = _core.group_body(task, sources, completions, tokens)
        return _core.as_group(await self._call("POST", "/v1/groups", body, safe=False))

    async def turn(self, group, attempt, turn, source=None, completion=None, tokens=None) -> Group:
        body = _core.turn_body(attempt, turn, source, completion, tokens)
        return _core.as_group(await self._call("POST", "/v1/groups/%s/turns" % _core.quote(group),
                                               body, safe=True))

    async def group(self, group) -> Group:
        return _core.as_group(await self._call("GET", "/v1/groups/" + _core.quote(group), None,
                                               safe=True))

    async def metrics(self) -> str:
        status, data, _ = await self._exchange("GET", "/metrics", None)
        if status != 200:
            raise LeapError(status, data.decode("utf-8", "replace"))
        return data.decode("utf-8")

    async def close(self):
        conns = list(self._open)
        self._idle.clear()
        self._open.clear()
        for c in conns:
            c.close()
        for c in conns:
            try:
                await c.writer.wait_closed()
            except Exception:  # a reset while closing changes nothing
                pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()

    # --- transport ---
    async def _call(self, method, path, body, safe):
        policy = Retry(self.retries, self.backoff)
        data = _core.encode(body)
        for attempt in range(self.retries + 1):
            try:
                status, raw, retry_after = await self._exchange(method, path, data)
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, _NoAnswer,
                    ValueError) as e:
                err = LeapError(0, "no answer from %s: %s" % (self.url, str(e) or type(e).__name__),
                                attempt + 1)
                if not safe or attempt == self.retries:
                    raise err from e
                await asyncio.sleep(policy.wait(attempt, None))
                continue
            payload, err, retryable = _core.decide(status, raw, safe)
            if err is None:
                return payload
            err.tries = attempt + 1
            if not retryable or attempt == self.retries:
                raise err
            await asyncio.sleep(policy.wait(attempt, retry_after))
        raise AssertionError("unreachable")

    async def _exchange(self, method, path, data):
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_connections)
        request = self._ep.request_bytes(method, path, data)
        async with self._slots:
            conn, reused = await self._take()
            try:
                try:
                    answer = await asyncio.wait_for(self._roundtrip(conn, request), self.timeout)
                except (_NoAnswer, ConnectionResetError, BrokenPipeError, ConnectionAbortedError,
                        ssl.SSLEOFError, ssl.SSLZeroReturnError):
                    # The server closed this kept-alive connection before reading the request:
                    # it never saw it, so send it once more on a new connection.
                    self._drop(conn)
                    if not reused:
                        raise
                    conn, reused = await self._new(), False
                    answer = await asyncio.wait_for(self._roundtrip(conn, request), self.timeout)
            except BaseException:  # errors, timeouts, cancellation: the connection is in an unknown state
                self._drop(conn)
                raise
            status, body, headers = answer
            if headers.get("connection", "").lower() == "close":
                self._drop(conn)
            else:
                self._idle.append(conn)
            return status, body, headers.get("retry-after")

    async def _take(self):
        while self._idle:
            conn = self._idle.pop()
            if conn.usable():
                return conn, True
            self._drop(conn)
        return await self._new(), False

    async def _new(self):
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(self._ep.host, self._ep.port, ssl=self._ep.ssl,
                                    limit=1 << 20), self.connect_timeout)
        conn = _Conn(reader, writer)
        self._open.add(conn)
        return conn

    def _drop(self, conn):
        self._open.discard(conn)
        conn.close()

    @staticmethod
    async def _roundtrip(conn, request):
        conn.writer.write(request)
        await conn.writer.drain()
        r = conn.reader
        line = await r.readline()
        if not line:
            raise _NoAnswer("the server closed the connection")
        parts = line.decode("latin-1").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
            raise ValueError("not an HTTP answer: %r" % line[:80])
        status = int(parts[1])
        headers = {}
        for _ in range(_MAX_HEADER_LINES):
            h = await r.readline()
            if h in (b"\r\n", b"\n"):
                break
            if not h:
                raise asyncio.IncompleteReadError(b"", None)
            k, _, v = h.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        else:
            raise ValueError("too many header lines")
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks = []
            while True:
                size = int((await r.readline()).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while (await r.readline()) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    break
                chunks.append(await r.readexactly(size))
                await r.readexactly(2)
            body = b"".join(chunks)
        elif "content-length" in headers:
            body = await r.readexactly(int(headers["content-length"]))
        else:  # no length: the body runs to the end of the connection
            body = await r.read()
            headers["connection"] = "close"
        return status, body, headers
