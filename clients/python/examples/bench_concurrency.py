"""Throughput of the asyncio client against the blocking one at 1, 8 and 64 concurrent episodes.

    leap serve &
    python3 clients/python/examples/bench_concurrency.py --task vector_add \\
        --source tests/env/candidates/vector_add/compile_error.cu --checks 256

An episode is a loop of checks, one after another (what one rollout's reward calls are); N
episodes run at once, --checks checks in all per row (each episode --checks / N of them). The
source is checked once before timing, so every timed check is a cache hit on the server (its
build is in the build cache), and what is measured is the client, HTTP and the server's request
path, not the compiler. Three ways:

- async: N coroutines on one event loop, one AsyncLeapEnv (kept-alive connections, up to N);
- blocking, N threads: N threads sharing one LeapEnv (one kept-alive connection per thread);
- blocking on the loop: N coroutines on one event loop calling the blocking LeapEnv, as a
  blocking reward function inside an async trainer does: each call stalls the whole loop.

Each row is timed after an untimed round of the same shape (connections open, caches warm).
Prints a Markdown table (checks per second, and the median latency of a check).
"""
import argparse
import asyncio
import os
import statistics
import threading
import time

from leap_env import AsyncLeapEnv, LeapEnv


def run_threads(env, task, src, n, per):
    lat = []
    lock = threading.Lock()

    def worker():
        mine = []
        for _ in range(per):
            t = time.perf_counter()
            assert env.check(task, src).status
            mine.append(time.perf_counter() - t)
        with lock:
            lat.extend(mine)

    ts = [threading.Thread(target=worker) for _ in range(n)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.perf_counter() - t0, lat


async def run_async(url, task, src, n, per):
    lat = []
    async with AsyncLeapEnv(url, max_connections=n) as env:
        async def episode(times):
            for _ in range(per):
                t = time.perf_counter()
                assert (await env.check(task, src)).status
                times.append(time.perf_counter() - t)

        await asyncio.gather(*(episode([]) for _ in range(n)))  # untimed: opens the connections
        t0 = time.perf_counter()
        await asyncio.gather(*(episode(lat) for _ in range(n)))
        return time.perf_counter() - t0, lat


async def run_blocking_on_loop(env, task, src, n, per):
    lat = []

    async def episode():
        for _ in range(per):
            t = time.perf_counter()
            assert env.check(task, src).status  # blocks the event loop
            lat.append(time.perf_counter() - t)
            await asyncio.sleep(0)

    t0 = time.perf_counter()
    await asyncio.gather(*(episode() for _ in range(n)))
    return time.perf_counter() - t0, lat


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default=os.environ.get("LEAP_SERVE_URL", "http://127.0.0.1:8420"))
    ap.add_argument("--task", required=True)
    ap.add_argument("--source", required=True, help="a candidate source: checked once first, then a cache hit")
    ap.add_argument("--checks", type=int, default=256, help="checks per row (split over the episodes)")
    ap.add_argument("--concurrency", default="1,8,64")
    args = ap.parse_args()
    src = open(args.source).read()
    env = LeapEnv(args.url)
    first = env.check(args.task, src)
    print("warm-up check: %s (cached build: %s)" % (first.status, first.cached))
    print()
    print("| concurrent episodes | checks | async: checks/s | async: median ms | blocking, N threads: checks/s "
          "| blocking, N threads: median ms | blocking on the loop: checks/s | blocking on the loop: median ms |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in [int(x) for x in args.concurrency.split(",")]:
        per = max(1, args.checks // n)
        rows = []
        secs, lat = asyncio.run(run_async(args.url, args.task, src, n, per))
        rows.append((secs, lat))
        run_threads(env, args.task, src, n, per)  # untimed: opens the threads' connections
        rows.append(run_threads(env, args.task, src, n, per))
        rows.append(asyncio.run(run_blocking_on_loop(env, args.task, src, n, per)))
        cells = []
        for secs, lat in rows:
            cells += ["%.0f" % (len(lat) / secs), "%.1f" % (1000 * statistics.median(lat))]
        print("| %d | %d | %s |" % (n, n * per, " | ".join(cells)))
    env.close()


if __name__ == "__main__":
    main()
