"""The blocking client: `LeapEnv`. Thread-safe; keeps HTTP/1.1 connections alive in a small pool
(one per thread using it at the same time), so a thread pool of N workers holds N connections."""
from __future__ import annotations

import http.client
import select
import ssl
import threading
import time
from typing import List, Optional, Sequence

from . import _core
from ._core import LeapError, Retry
from .types import Group, Health, Task, TaskSummary, Verdict


class LeapEnv:
    """A blocking client of `leap serve`.

        env = LeapEnv("http://127.0.0.1:8420")         # token: $LEAP_SERVE_TOKEN if set
        v = env.check("vector_add", source)            # a Verdict: v.status, v.feedback, ...
        g = env.open_group("vector_add", sources=[s1, s2, s3, s4])
        for a in g.awaiting():                         # DCP expanded them
            g = env.turn(g.id, a.attempt, a.next_turn, source=fixed)
        g = env.group(g.id)                            # once finished: g.rewards, a.advantages
    """

    def __init__(self, url=_core.DEFAULT_URL, token=None, timeout=900.0, retries=8, cafile=None,
                 backoff=0.5, max_idle_connections=64):
        self._ep = _core.Endpoint(url, token, cafile)
        self.url = self._ep.url
        self.token = self._ep.token
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._max_idle = max_idle_connections
        self._idle: List[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    # --- the API ---
    def health(self) -> Health:
        return _core.as_health(self._call("GET", "/health", None, safe=True))

    def tasks(self) -> List[TaskSummary]:
        return _core.as_tasks(self._call("GET", "/v1/tasks", None, safe=True))

    def task(self, name) -> Task:
        return _core.as_task(self._call("GET", "/v1/tasks/" + _core.quote(name), None, safe=True))

    def check(self, task, source=None, completion=None) -> Verdict:
        """The verdict of one candidate: its code (`source`) or a model's response
        (`completion`: the code is extracted as leap's trainer does)."""
        body = _core.text_body({"task": task}, source, completion)
        return _core.as_verdict(self._call("POST", "/v1/check", body, safe=True))

    def open_group(self, task, sources: Optional[Sequence[str]] = None,
                   completions: Optional[Sequence[str]] = None, tokens=None) -> Group:
        """Turn 1 of a LEAP group of len(sources) attempts; answered once every turn-1 verdict
        is in, with the DCP decision and each expanded attempt's `next_turn` and `next_prompt`.
        Not idempotent: retried only on 429/503 (the server did nothing)."""
        body = _core.group_body(task, sources, completions, tokens)
        return _core.as_group(self._call("POST", "/v1/groups", body, safe=False))

    def turn(self, group, attempt, turn, source=None, completion=None, tokens=None) -> Group:
        """A later turn of one attempt; answered once it is judged (the whole group's view).
        Idempotent: a turn sent twice is answered with the first one's outcome."""
        body = _core.turn_body(attempt, turn, source, completion, tokens)
        return _core.as_group(self._call("POST", "/v1/groups/%s/turns" % _core.quote(group), body,
                                         safe=True))

    def group(self, group) -> Group:
        return _core.as_group(self._call("GET", "/v1/groups/" + _core.quote(group), None, safe=True))

    def metrics(self) -> str:
        status, data, _ = self._exchange("GET", "/metrics", None)
        if status != 200:
            raise LeapError(status, data.decode("utf-8", "replace"))
        return data.decode("utf-8")

    def close(self):
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- transport ---
    def _call(self, method, path, body, safe):
        policy = Retry(self.retries, self.backoff)
        data = _core.encode(body)
        for attempt in range(self.retries + 1):
            try:
                status, raw, retry_after = self._exchange(method, path, data)
            except (OSError, http.client.HTTPException) as e:  # timeouts and refusals are OSErrors
                err = LeapError(0, "no answer from %s: %s" % (self.url, e or type(e).__name__),
                                attempt + 1)
                if not safe or attempt == self.retries:
                    raise err
                time.sleep(policy.wait(attempt, None))
                continue
            payload, err, retryable = _core.decide(status, raw, safe)
            if err is None:
                return payload
            err.tries = attempt + 1
            if not retryable or attempt == self.retries:
                raise err
            time.sleep(policy.wait(attempt, retry_after))
        raise AssertionError("unreachable")

    def _exchange(self, method, path, data):
        """One request on a kept-alive connection: (status, body, Retry-After). A connection the
        server closed while idle is noticed before use, and a request that got no byte back on a
        reused connection is sent once more on a new one (the server never saw it)."""
        conn, reused = self._take()
        try:
            try:
                conn.request(method, self._ep.prefix + path, body=data,
                             headers=self._ep.headers(data is not None))
                r = conn.getresponse()
            except _STALE:
                conn.close()
                if not reused:
                    raise
                conn, reused = self._new(), False
                conn.request(method, self._ep.prefix + path, body=data,
                             headers=self._ep.headers(data is not None))
                r = conn.getresponse()
            body = r.read()
        except BaseException:
            conn.close()
            raise
        if r.will_close:
            conn.close()
        else:
            self._give(conn)
        return r.status, body, r.getheader("Retry-After")

    def _new(self):
        if self._ep.https:
            return http.client.HTTPSConnection(self._ep.host, self._ep.port, timeout=self.timeout,
                                               context=self._ep.ssl)
        return http.client.HTTPConnection(self._ep.host, self._ep.port, timeout=self.timeout)

    def _take(self):
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return self._new(), False
            if conn.sock is not None and not _dropped(conn.sock):
                conn.timeout = self.timeout
                conn.sock.settimeout(self.timeout)
                return conn, True
            conn.close()

    def _give(self, conn):
        with self._lock:
            if len(self._idle) < self._max_idle:
                self._idle.append(conn)
                return
        conn.close()


# How a kept-alive connection the server already closed fails (RemoteDisconnected is a
# ConnectionResetError); over TLS it may also be an EOF of the TLS layer.
_STALE = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, ssl.SSLEOFError,
          ssl.SSLZeroReturnError)


def _dropped(sock) -> bool:
    """True when the server closed an idle connection (it is readable: EOF, or an error)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)
