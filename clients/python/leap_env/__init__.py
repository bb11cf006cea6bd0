"""leap_env: the Python client of `leap serve` (docs/serve.md), standard library only.

    from leap_env import LeapEnv, AsyncLeapEnv
    env = LeapEnv("http://127.0.0.1:8420")            # blocking; token: $LEAP_SERVE_TOKEN if set
    verdict = env.check("vector_add", source)          # a Verdict (also reads like the JSON dict)
    async with AsyncLeapEnv() as aenv:                  # asyncio: many calls in flight on one loop
        verdicts = await asyncio.gather(*(aenv.check("vector_add", s) for s in sources))

Reward entry points: `compute_score` (veRL), `compute_score_async` (veRL's async reward loop),
`compute_score_batch` (veRL's batch reward manager), `LeapReward` (TRL's `reward_funcs`).
"""
import os

from ._core import SCHEMA, LeapError
from .aio import AsyncLeapEnv
from .client import LeapEnv
from .rewards import LeapReward, compute_score_async, compute_score_batch
from .types import Attempt, Group, Health, Task, TaskSummary, Turn, Verdict

__version__ = "0.2.0"

__all__ = ["LeapEnv", "AsyncLeapEnv", "LeapError", "compute_score", "compute_score_async",
           "compute_score_batch", "LeapReward", "Health", "TaskSummary", "Task", "Verdict", "Turn",
           "Attempt", "Group", "SCHEMA"]

_default_env = None  # the LeapEnv compute_score uses (made on first use; tests may set it)


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """veRL's reward-function signature (`custom_reward_function.name=compute_score`).
    `ground_truth` (or extra_info["task"]) names the leap task; `solution_str` is the model's
    response (the server extracts its code). 1.0 when the kernel is correct, else 0.0. The server
    is $LEAP_SERVE_URL (default http://127.0.0.1:8420). Extra keyword arguments veRL passes
    (reward_router_address, ...) are ignored. Blocking: for an asyncio caller use
    compute_score_async."""
    global _default_env
    if _default_env is None:
        _default_env = LeapEnv(os.environ.get("LEAP_SERVE_URL", "http://127.0.0.1:8420"),
                               cafile=os.environ.get("LEAP_SERVE_CAFILE"))
    task = (extra_info or {}).get("task") or ground_truth
    verdict = _default_env.check(task, completion=solution_str)
    return 1.0 if verdict.status == "correct" else 0.0
