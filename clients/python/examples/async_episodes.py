"""Many multi-turn LEAP groups (episodes) driven concurrently by one asyncio loop, the way an
asynchronous RL stack (veRL's agent loop, prime-rl, SkyRL, TRL async GRPO) runs its rollouts:
every episode is a coroutine, every call to `leap serve` an await on AsyncLeapEnv, and nothing
blocks the loop (a ticker coroutine measures the loop's worst lag while the episodes run).

    leap serve &
    python3 clients/python/examples/async_episodes.py --task vector_add --episodes 64 \\
        --bad tests/env/candidates/vector_add/compile_error.cu \\
        --fix tests/env/candidates/vector_add/grid_stride.cu

Each episode opens a group of --group-size attempts whose turn 1 is the --bad source; `policy()`
stands in for the model (in a trainer it awaits vLLM/SGLang with the attempt's `next_prompt` or
its own chat built from each verdict's `feedback`): attempt 0 answers turn 2 with the --fix
source, the others keep sending --bad, so attempt 0 is solved on turn 2 and ranks first. With
--json it prints a summary (episodes, seconds, the loop's worst lag, rewards, ends) as JSON.
"""
import argparse
import asyncio
import collections
import json
import os
import time

from leap_env import AsyncLeapEnv


async def policy(attempt, next_turn, prompt, feedback, bad, fix):
    await asyncio.sleep(0)  # a real policy awaits the inference server here
    return fix if attempt.attempt == 0 and next_turn == 2 else bad


async def timed(slowest, call):
    """Awaits `call`, keeping the slowest call's seconds in slowest[0]."""
    t = time.perf_counter()
    out = await call
    slowest[0] = max(slowest[0], time.perf_counter() - t)
    return out


async def episode(env, task, group_size, bad, fix, slowest):
    g = await timed(slowest, env.open_group(task, sources=[bad] * group_size))
    while not g.finished:
        waiting = g.awaiting()
        if not waiting:
            await asyncio.sleep(0.05)
            g = await env.group(g.id)
            continue

        async def one(a):
            src = await policy(a, a.next_turn, a.next_prompt, a.last_verdict.feedback, bad, fix)
            return await timed(slowest, env.turn(g.id, a.attempt, a.next_turn, source=src))

        await asyncio.gather(*(one(a) for a in waiting))  # this episode's attempts in parallel too
        g = await env.group(g.id)
    return g


async def run(args):
    bad, fix = open(args.bad).read(), open(args.fix).read()
    lag = [0.0]
    slowest = [0.0]  # the slowest call: a client that blocked the loop would lag it this long
    stop = asyncio.Event()

    async def ticker():  # the loop's responsiveness while the episodes run
        while not stop.is_set():
            t = time.perf_counter()
            await asyncio.sleep(0.01)
            lag[0] = max(lag[0], time.perf_counter() - t - 0.01)

    async with AsyncLeapEnv(args.url, max_connections=args.max_connections) as env:
        tick = asyncio.ensure_future(ticker())
        t0 = time.perf_counter()
        groups = await asyncio.gather(*(episode(env, args.task, args.group_size, bad, fix, slowest)
                                        for _ in range(args.episodes)))
        seconds = time.perf_counter() - t0
        stop.set()
        await tick
    ends = collections.Counter(a.end for g in groups for a in g.attempts)
    return {"episodes": len(groups), "seconds": round(seconds, 3), "max_loop_lag_seconds": round(lag[0], 4),
            "slowest_call_seconds": round(slowest[0], 4),
            "finished": sum(g.finished for g in groups), "ends": dict(ends),
            "rewards": [g.rewards for g in groups],
            "solved_turns": [[a.solved_turn for a in g.attempts] for g in groups],
            "advantages": [[a.advantages for a in g.attempts] for g in groups]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default=os.environ.get("LEAP_SERVE_URL", "http://127.0.0.1:8420"))
    ap.add_argument("--task", required=True)
    ap.add_argument("--bad", required=True, help="turn-1 source of every attempt")
    ap.add_argument("--fix", required=True, help="the source attempt 0 sends on turn 2")
    ap.add_argument("--episodes", type=int, default=64)
    ap.add_argument("--group-size", type=int, default=2)
    ap.add_argument("--max-connections", type=int, default=64)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = asyncio.run(run(args))
    if args.json:
        print(json.dumps(out))
        return
    print("%d episodes in %.2f s (loop's worst lag %.1f ms); ends %s" % (
        out["episodes"], out["seconds"], 1000 * out["max_loop_lag_seconds"], out["ends"]))
    for i, r in enumerate(out["rewards"][:4]):
        print("episode %d: rewards %s advantages %s" % (i, r, out["advantages"][i]))


if __name__ == "__main__":
    main()
