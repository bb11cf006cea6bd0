"""A client of `leap serve` (docs/serve.md) for Python RL stacks, standard library only.

    from leap_env import LeapEnv
    env = LeapEnv("http://127.0.0.1:8420")           # token: $LEAP_SERVE_TOKEN if set
    verdict = env.check("vector_add", source)         # the object `leap check --json` prints
    group = env.open_group("vector_add", sources=[s1, s2, s3, s4])
    for a in group["attempts"]:
        if a["state"] == "awaiting_turn":             # DCP expanded it
            group = env.turn(group["group"], a["attempt"], a["next_turn"], source=fixed)
    group = env.group(group["group"])                 # once finished: "rewards", "advantages"

Calls are retried on 429 and 503 (after the server's Retry-After) and, when safe, on connection
errors and 504: checks and turns are idempotent (a turn sent twice is answered once), opening a
group is not (it is retried only when the server said it did nothing: 429, 503).

`compute_score` is a veRL-style reward function (`custom_reward_function.path` pointing at this
file): 1.0 when the response's kernel is correct, 0.0 otherwise.
"""

import json
import os
import ssl
import time
import urllib.error
import urllib.request

__all__ = ["LeapEnv", "LeapError", "compute_score"]

SCHEMA = "v1"


class LeapError(Exception):
    """An answer that is not a success: `status` is the HTTP code (0: no answer at all)."""

    def __init__(self, status, message):
        super().__init__("leap serve answered %s: %s" % (status, message) if status else message)
        self.status = status
        self.message = message


class LeapEnv:
    def __init__(self, url="http://127.0.0.1:8420", token=None, timeout=900.0, retries=8,
                 cafile=None, backoff=0.5):
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get("LEAP_SERVE_TOKEN")
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._ssl = ssl.create_default_context(cafile=cafile) if self.url.startswith("https") else None

    # --- the API ---
    def health(self):
        return self._call("GET", "/health", None, safe=True)

    def tasks(self):
        return self._call("GET", "/v1/tasks", None, safe=True)["tasks"]

    def task(self, name):
        return self._call("GET", "/v1/tasks/" + name, None, safe=True)

    def check(self, task, source=None, completion=None):
        """The verdict of one candidate: its code (`source`) or a model's response
        (`completion`, the code is extracted as leap's trainer does)."""
        return self._call("POST", "/v1/check", _text({"task": task}, source, completion), safe=True)

    def open_group(self, task, sources=None, completions=None, tokens=None):
        """Turn 1 of a LEAP group of len(sources) attempts; answered once every turn-1 verdict
        is in, with the DCP decision and each expanded attempt's `next_turn` and `next_prompt`."""
        if (sources is None) == (completions is None):
            raise ValueError("give sources or completions")
        body = {"task": task}
        body["sources" if sources is not None else "completions"] = list(
            sources if sources is not None else completions)
        if tokens is not None:
            body["tokens"] = list(tokens)
        return self._call("POST", "/v1/groups", body, safe=False)

    def turn(self, group, attempt, turn, source=None, completion=None, tokens=None):
        """A later turn of one attempt; answered once it is judged (the whole group's view)."""
        body = _text({"attempt": attempt, "turn": turn}, source, completion)
        if tokens is not None:
            body["tokens"] = tokens
        return self._call("POST", "/v1/groups/%s/turns" % group, body, safe=True)

    def group(self, group):
        return self._call("GET", "/v1/groups/" + group, None, safe=True)

    def metrics(self):
        return self._raw("GET", "/metrics", None)[1].decode("utf-8")

    # --- transport ---
    def _call(self, method, path, body, safe):
        last = None
        for attempt in range(self.retries + 1):
            try:
                status, data, headers = self._raw(method, path, body)
            except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
                if not safe:
                    raise LeapError(0, "no answer from %s: %s" % (self.url, e))
                last = LeapError(0, "no answer from %s: %s" % (self.url, e))
                time.sleep(self.backoff * (2 ** min(attempt, 5)))
                continue
            payload = json.loads(data.decode("utf-8")) if data else {}
            if status == 200:
                return payload
            message = payload.get("error", {}).get("message", data.decode("utf-8", "replace"))
            retryable = status in (429, 503) or (safe and status == 504)
            if not retryable or attempt == self.retries:
                raise LeapError(status, message)
            last = LeapError(status, message)
            wait = headers.get("Retry-After")
            time.sleep(float(wait) if wait else self.backoff * (2 ** min(attempt, 5)))
        raise last

    def _raw(self, method, path, body):
        data = json.dumps(body).encode("utf-8") if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ssl) as r:
                return r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers


def _text(body, source, completion):
    if (source is None) == (completion is None):
        raise ValueError("give source or completion")
    if source is not None:
        body["source"] = source
    else:
        body["completion"] = completion
    return body


_default_env = None


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """veRL's reward-function signature. `ground_truth` (or extra_info["task"]) names the leap
    task; `solution_str` is the model's response (its code is extracted by the server). The
    server is $LEAP_SERVE_URL (default http://127.0.0.1:8420)."""
    global _default_env
    if _default_env is None:
        _default_env = LeapEnv(os.environ.get("LEAP_SERVE_URL", "http://127.0.0.1:8420"))
    task = (extra_info or {}).get("task") or ground_truth
    verdict = _default_env.check(task, completion=solution_str)
    return 1.0 if verdict["status"] == "correct" else 0.0
