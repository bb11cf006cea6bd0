"""What the blocking and the asyncio clients share: the API's requests, the retry policy, and
decoding answers into the typed results. No I/O here."""
from __future__ import annotations

import json
import os
import ssl
import urllib.parse
from typing import Any, Dict, Optional, Tuple

from .types import Group, Health, Task, TaskSummary, Verdict

DEFAULT_URL = "http://127.0.0.1:8420"
USER_AGENT = "leap-env-python/0.2"
SCHEMA = "v1"


class LeapError(Exception):
    """An answer that is not a success: `status` is the HTTP code (0: no answer at all)."""

    def __init__(self, status, message, tries=1):
        super().__init__("leap serve answered %s: %s" % (status, message) if status else message)
        self.status = status
        self.message = message
        self.tries = tries


class Endpoint:
    """Where the server is and how to reach it: host, port, TLS context, the request headers."""

    def __init__(self, url, token, cafile):
        self.url = url.rstrip("/")
        u = urllib.parse.urlsplit(self.url)
        if u.scheme not in ("http", "https"):
            raise ValueError("url must be http:// or https://, not %r" % url)
        self.https = u.scheme == "https"
        self.host = u.hostname or "127.0.0.1"
        self.port = u.port or (443 if self.https else 80)
        self.prefix = u.path.rstrip("/")
        self.token = token if token is not None else os.environ.get("LEAP_SERVE_TOKEN")
        self.ssl = ssl.create_default_context(cafile=cafile) if self.https else None
        host_header = self.host if ":" not in self.host else "[%s]" % self.host
        default_port = 443 if self.https else 80
        self.host_header = host_header if self.port == default_port else "%s:%d" % (host_header, self.port)

    def headers(self, has_body):
        h = {"Host": self.host_header, "User-Agent": USER_AGENT, "Accept": "application/json",
             "Connection": "keep-alive"}
        if has_body:
            h["Content-Type"] = "application/json"
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        return h

    def request_bytes(self, method, path, body: Optional[bytes]) -> bytes:
        """The whole HTTP/1.1 request (for the asyncio client)."""
        h = self.headers(body is not None)
        h["Content-Length"] = str(len(body) if body is not None else 0)
        head = "%s %s HTTP/1.1\r\n" % (method, self.prefix + path)
        head += "".join("%s: %s\r\n" % kv for kv in h.items()) + "\r\n"
        return head.encode("latin-1") + (body or b"")


def encode(body) -> Optional[bytes]:
    return json.dumps(body).encode("utf-8") if body is not None else None


def text_body(body: Dict[str, Any], source, completion) -> Dict[str, Any]:
    if (source is None) == (completion is None):
        raise ValueError("give source or completion")
    if source is not None:
        body["source"] = source
    else:
        body["completion"] = completion
    return body


def group_body(task, sources, completions, tokens):
    if (sources is None) == (completions is None):
        raise ValueError("give sources or completions")
    body = {"task": task}
    body["sources" if sources is not None else "completions"] = list(
        sources if sources is not None else completions)
    if tokens is not None:
        body["tokens"] = list(tokens)
    return body


def turn_body(attempt, turn, source, completion, tokens):
    body = text_body({"attempt": attempt, "turn": turn}, source, completion)
    if tokens is not None:
        body["tokens"] = tokens
    return body


def quote(segment) -> str:
    return urllib.parse.quote(str(segment), safe="")


class Retry:
    """The retry policy of both clients.

    429 and 503 (the server is busy or stopping, and did nothing) are retried after the server's
    Retry-After, or a doubling back-off; for the idempotent calls (everything but opening a group)
    so are 504, a timeout and a lost connection. Other answers are final."""

    def __init__(self, retries, backoff, max_wait=60.0):
        self.retries = retries
        self.backoff = backoff
        self.max_wait = max_wait

    def wait(self, attempt, retry_after: Optional[str]) -> float:
        if retry_after:
            try:
                return min(max(float(retry_after), 0.0), self.max_wait)
            except ValueError:
                pass  # an HTTP date: not what leap sends; back off instead
        return min(self.backoff * (2 ** min(attempt, 6)), self.max_wait)


def decide(status: int, data: bytes, safe: bool) -> Tuple[Optional[Dict[str, Any]], Optional[LeapError], bool]:
    """(payload, error, retryable) for one answer."""
    try:
        payload = json.loads(data.decode("utf-8")) if data else {}
    except ValueError:
        payload = None
    if status == 200 and isinstance(payload, dict):
        return payload, None, False
    message = data.decode("utf-8", "replace")
    if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
        message = payload["error"].get("message", message)
    if status == 200:
        message = "not a JSON object: " + message[:200]
    retryable = status in (429, 503) or (safe and status == 504)
    return None, LeapError(status, message), retryable


# Decoding the answers of each call.
def as_health(d):
    return Health.from_json(d)


def as_tasks(d):
    return [TaskSummary.from_json(t) for t in d["tasks"]]


def as_task(d):
    return Task.from_json(d)


def as_verdict(d):
    return Verdict.from_json(d)


def as_group(d):
    return Group.from_json(d)
