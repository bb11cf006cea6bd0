"""Reward entry points for RL stacks, on the asyncio client.

- `compute_score_async`: veRL's reward loop awaits a coroutine-function compute_score
  (`custom_reward_function.name=compute_score_async`); one AsyncLeapEnv per event loop.
- `compute_score_batch`: veRL's BatchRewardManager signature (lists in, list of floats out); the
  batch's checks are all in flight at once.
- `LeapReward`: a TRL `reward_funcs` callable, `(prompts, completions, **columns) -> [float]`.

The synchronous ones run their checks on one background event loop (a daemon thread owning an
AsyncLeapEnv per server), so a batch of N responses is N concurrent requests on kept-alive
connections, and the calling thread only waits for the batch's result.
"""
from __future__ import annotations

import asyncio
import os
import threading
import weakref
from typing import Callable, Dict, List, Optional, Sequence

from .aio import AsyncLeapEnv
from .types import Verdict

_ENV_URL = "LEAP_SERVE_URL"
_DEFAULT = "http://127.0.0.1:8420"


def _url(url=None):
    return url or os.environ.get(_ENV_URL, _DEFAULT)


def binary_score(v: Verdict) -> float:
    """1.0 for a correct kernel, 0.0 otherwise (leap's turn-1 reward)."""
    return 1.0 if v.status == "correct" else 0.0


def _task_of(ground_truth, extra_info):
    return (extra_info or {}).get("task") or ground_truth


# --- veRL, async ---
_loop_envs: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Dict[str, AsyncLeapEnv]]" = \
    weakref.WeakKeyDictionary()


def _env_for_running_loop(url) -> AsyncLeapEnv:
    loop = asyncio.get_running_loop()
    envs = _loop_envs.setdefault(loop, {})
    if url not in envs:
        envs[url] = AsyncLeapEnv(url, cafile=os.environ.get("LEAP_SERVE_CAFILE"))
    return envs[url]


async def compute_score_async(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """compute_score as a coroutine: the same arguments and score, without blocking the loop."""
    env = _env_for_running_loop(_url())
    v = await env.check(_task_of(ground_truth, extra_info), completion=solution_str)
    return binary_score(v)


# --- a background event loop for the synchronous entry points ---
class _Background:
    def __init__(self):
        self._lock = threading.Lock()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._envs: Dict[tuple, AsyncLeapEnv] = {}

    def run(self, coro_fn, key):
        """Runs coro_fn(env) on the background loop and waits for its result."""
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, name="leap_env-loop",
                                 daemon=True).start()
            if key not in self._envs:
                url, token, cafile, max_connections = key
                self._envs[key] = AsyncLeapEnv(url, token=token, cafile=cafile,
                                               max_connections=max_connections)
            env = self._envs[key]
        return asyncio.run_coroutine_threadsafe(coro_fn(env), self._loop).result()


_background = _Background()


def _check_all(tasks: Sequence[str], completions: Sequence[str]):
    async def go(env):
        return await asyncio.gather(*(env.check(t, completion=c) for t, c in zip(tasks, completions)))
    return go


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs):
    """veRL's BatchRewardManager signature: the scores of a whole batch, checked concurrently."""
    extra_infos = extra_infos if extra_infos is not None else [None] * len(solution_strs)
    tasks = [_task_of(g, e) for g, e in zip(ground_truths, extra_infos)]
    key = (_url(), None, os.environ.get("LEAP_SERVE_CAFILE"), 64)
    return [binary_score(v) for v in _background.run(_check_all(tasks, list(solution_strs)), key)]


# --- TRL ---
def _completion_text(c) -> str:
    """TRL passes strings (standard format) or message lists (conversational format)."""
    if isinstance(c, str):
        return c
    if isinstance(c, list):  # [{"role": "assistant", "content": ...}, ...]
        texts = [m.get("content", "") for m in c if isinstance(m, dict) and m.get("role") == "assistant"]
        return texts[-1] if texts else ""
    if isinstance(c, dict):
        return c.get("content", "")
    raise TypeError("a completion must be a string or a list of messages, not %s" % type(c).__name__)


class LeapReward:
    """A TRL `reward_funcs` entry: `GRPOTrainer(..., reward_funcs=[LeapReward()])`.

    Each completion's task is the dataset column `task_column` (TRL passes the batch's columns
    as keyword arguments, one value per completion) or the fixed `task`. Scores are `score(Verdict)`
    (default: 1.0 when correct, else 0.0); all of a batch's checks are in flight at once."""

    def __init__(self, url=None, task=None, task_column="task", token=None, cafile=None,
                 score: Callable[[Verdict], float] = binary_score, max_connections=64):
        self.url = _url(url)
        self.task = task
        self.task_column = task_column
        self.score = score
        self._key = (self.url, token, cafile if cafile is not None else os.environ.get("LEAP_SERVE_CAFILE"),
                     max_connections)
        self.__name__ = "leap_" + (task or task_column)  # TRL logs rewards under __name__
        self.last_verdicts: List[Verdict] = []

    def __call__(self, prompts=None, completions=None, **kwargs) -> List[float]:
        if completions is None:
            raise ValueError("TRL passes completions=...")
        texts = [_completion_text(c) for c in completions]
        if self.task is not None:
            tasks = [self.task] * len(texts)
        else:
            column = kwargs.get(self.task_column)
            if column is None:
                raise ValueError("no task: give LeapReward(task=...) or a dataset column %r" % self.task_column)
            tasks = list(column)
        if len(tasks) != len(texts):
            raise ValueError("%d tasks for %d completions" % (len(tasks), len(texts)))
        self.last_verdicts = _background.run(_check_all(tasks, texts), self._key)
        return [float(self.score(v)) for v in self.last_verdicts]
