"""The Python client package (clients/python, `leap_env`): installed offline with Debian's python3,
pip and setuptools into fresh virtual environments, then its examples run against a live
`leap serve` (CPU backend, vector_add's bundled candidates):

- install: `pip install --no-index --no-build-isolation ./clients/python` into a venv made with
  /usr/bin/python3 -m venv --system-site-packages (Debian's setuptools and wheel build it); and
  the wheel built once by Debian's pip installed into a venv without system site-packages, where
  the examples then run: the package needs nothing but the standard library at run time;
- the veRL reward file (loaded as veRL loads it: compute_score, compute_score_async in an asyncio
  reward loop, compute_score_batch), the TRL `reward_funcs` callable, and 64 concurrent
  multi-turn episodes on one asyncio loop whose lag stays small (nothing blocks it);
- 429s with Retry-After from a server with a one-job queue, retried by the asyncio client;
- against a scripted HTTP server in this process: Retry-After is waited, opening a group is not
  retried on 504 or a lost connection, checks are, and at most max_connections kept-alive
  connections carry many concurrent calls.
"""
import asyncio
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

from leap_server import LeapServer

PY = "/usr/bin/python3"
CANDIDATES = "tests/env/candidates/vector_add"


def pip_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull  # no pip.conf: no index, no find-links, nothing fetched
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def run(args, timeout=300, **kw):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, **kw)
    assert r.returncode == 0, "%s\nstdout:\n%s\nstderr:\n%s" % (args, r.stdout, r.stderr)
    return r


@pytest.fixture(scope="module")
def package_copy(source_dir, tmp_path_factory):
    """clients/python copied out of the tree: building writes build/ and *.egg-info next to it."""
    dst = tmp_path_factory.mktemp("pkg") / "python"
    shutil.copytree(source_dir / "clients" / "python", dst,
                    ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__"))
    return dst


@pytest.fixture(scope="module")
def isolated_python(package_copy, tmp_path_factory):
    """A venv without system site-packages holding the wheel Debian's pip built: the examples run
    with it."""
    base = tmp_path_factory.mktemp("wheel")
    run([PY, "-m", "pip", "wheel", "--no-index", "--no-build-isolation", "--no-deps", "-w",
         base / "dist", package_copy], env=pip_env())
    wheels = list((base / "dist").glob("leap_env-*.whl"))
    assert len(wheels) == 1, wheels
    run([PY, "-m", "venv", base / "venv"])
    run([base / "venv" / "bin" / "pip", "install", "--no-index", wheels[0]], env=pip_env())
    return base / "venv" / "bin" / "python"


@pytest.fixture(scope="module")
def server(leap_binary):
    # One trial and no repeat run per check: these tests judge the client package against a live
    # server (statuses, rewards, concurrency), not the depth of a verdict, and the 64 episodes'
    # hundreds of checks otherwise each run the candidate four times.
    srv = LeapServer(leap_binary, extra_sets=("executor.workers=2", "executor.trials=1",
                                              "executor.check_repeat=false"))
    yield srv
    srv.stop()


def test_pip_install_offline_with_debians_setuptools(package_copy, tmp_path):
    venv = tmp_path / "venv"
    run([PY, "-m", "venv", "--system-site-packages", venv])
    run([venv / "bin" / "pip", "install", "--no-index", "--no-build-isolation", package_copy], env=pip_env())
    out = run([venv / "bin" / "python", "-c",
               "import leap_env, json; print(json.dumps([leap_env.__file__, leap_env.__version__, "
               "sorted(leap_env.__all__)]))"], cwd=tmp_path).stdout
    path, version, names = json.loads(out)
    assert path.startswith(str(venv)), path  # the installed copy, not the source tree
    assert version == "0.2.0"
    for n in ("LeapEnv", "AsyncLeapEnv", "LeapError", "compute_score", "compute_score_async",
              "compute_score_batch", "LeapReward", "Verdict", "Group"):
        assert n in names


def test_the_installed_package_uses_only_the_standard_library(isolated_python, tmp_path):
    out = run([isolated_python, "-c",
               "import sys, leap_env, leap_env.aio, leap_env.rewards; "
               "print([p for p in sys.path if 'packages' in p]); print(leap_env.__file__)"],
              cwd=tmp_path).stdout.splitlines()
    assert "dist-packages" not in out[0], out  # Debian's site-packages are not on the path
    assert "site-packages/leap_env" in out[1]


def example(source_dir, name):
    return source_dir / "clients" / "python" / "examples" / name


def with_url(srv):
    return dict(os.environ, LEAP_SERVE_URL=srv.base_url)


def test_verl_reward_function(isolated_python, server, source_dir, tmp_path):
    c = source_dir / CANDIDATES
    out = run([isolated_python, example(source_dir, "verl_reward.py"), "vector_add",
               c / "grid_stride.cu", c / "wrong_answer.cu"], env=with_url(server), cwd=tmp_path).stdout
    scores = json.loads(out)
    assert scores == {"naive": [1.0, 0.0, 0.0], "async": [1.0, 0.0, 0.0], "batch": [1.0, 0.0, 0.0]}


def test_trl_reward_funcs_callable(isolated_python, server, source_dir, tmp_path):
    c = source_dir / CANDIDATES
    out = json.loads(run([isolated_python, example(source_dir, "trl_reward.py"), "vector_add",
                          c / "grid_stride.cu", c / "wrong_answer.cu"], env=with_url(server),
                         cwd=tmp_path).stdout)
    assert out["name"] == "leap_task"
    assert out["standard"] == [1.0, 0.0, 1.0, 0.0]  # no speedup on the CPU emulation
    assert out["conversational"] == [1.0, 0.0]
    assert out["fixed_task"] == [0.0, 1.0]
    assert out["statuses"] == ["correct", "wrong_answer"]


def test_64_concurrent_multi_turn_episodes_on_one_asyncio_loop(isolated_python, server, source_dir, tmp_path):
    c = source_dir / CANDIDATES
    t0 = time.monotonic()
    out = json.loads(run([isolated_python, example(source_dir, "async_episodes.py"), "--task", "vector_add",
                          "--episodes", "64", "--group-size", "2", "--bad", c / "compile_error.cu",
                          "--fix", c / "grid_stride.cu", "--json"],
                         env=with_url(server), cwd=tmp_path, timeout=400).stdout)
    print("64 episodes: %.1f s (client's own count %.1f s), loop's worst lag %.1f ms" % (
        time.monotonic() - t0, out["seconds"], 1000 * out["max_loop_lag_seconds"]))
    assert out["episodes"] == 64 and out["finished"] == 64
    assert out["ends"] == {"solved": 64, "out_of_turns": 64}
    for rewards, solved, adv in zip(out["rewards"], out["solved_turns"], out["advantages"]):
        assert solved == [2, 0]  # attempt 0 fixed on turn 2; attempt 1 never
        assert rewards[0] > rewards[1]
        assert len(adv[0]) == 2 and len(adv[1]) == 3
    # Nothing blocked the loop: a 10 ms ticker kept running while 64 episodes awaited the server.
    # A blocking call would stall it for the whole call, so its worst lag would reach the slowest
    # call's time; compared with that (not a fixed bound), a loaded machine slows both alike.
    assert out["max_loop_lag_seconds"] < 0.5 * out["slowest_call_seconds"], (
        out["max_loop_lag_seconds"], out["slowest_call_seconds"])


def test_the_async_client_retries_429s_from_a_full_queue(leap_binary, isolated_python, source_dir, tmp_path):
    srv = LeapServer(leap_binary, extra_sets=("serve.max_queue=1",))
    try:
        script = """
import asyncio, json, sys
from leap_env import AsyncLeapEnv
src = open(sys.argv[2]).read()
async def main():
    async with AsyncLeapEnv(sys.argv[1], retries=40, backoff=0.1) as env:
        await env.check("vector_add", src)  # builds it: the rest are cache hits that run
        vs = await asyncio.gather(*(env.check("vector_add", src) for _ in range(8)))
        m = await env.metrics()
    busy = [l for l in m.splitlines() if l.startswith('leap_http_requests_total{route="check",code="429"}')]
    print(json.dumps({"statuses": [v.status for v in vs], "busy": busy}))
asyncio.run(main())
"""
        out = json.loads(run([isolated_python, "-c", script, srv.base_url, source_dir / CANDIDATES / "grid_stride.cu"],
                             cwd=tmp_path, timeout=300).stdout)
        assert out["statuses"] == ["correct"] * 8
        assert out["busy"] and int(float(out["busy"][0].split()[-1])) > 0, out
    finally:
        srv.stop()


# --- against a scripted server in this process (the source tree's package, the old import path) ---
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))


class Script(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    answers = {}  # path -> list of (status, headers, body) answered in turn; the last one repeats
    seen = []
    connections = 0
    lock = threading.Lock()

    def setup(self):
        super().setup()
        with Script.lock:
            Script.connections += 1

    def log_message(self, *a):
        pass

    def handle_one(self):
        n = int(self.headers.get("Content-Length", 0))
        self.rfile.read(n)
        with Script.lock:
            Script.seen.append((self.command, self.path, time.monotonic()))
            queue = Script.answers[self.path]
            status, headers, body = queue.pop(0) if len(queue) > 1 else queue[0]
        if status == "drop":
            self.close_connection = True
            self.wfile.flush()
            self.connection.shutdown(2)
            return
        data = json.dumps(body).encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = handle_one


@pytest.fixture
def scripted():
    Script.answers, Script.seen, Script.connections = {}, [], 0
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Script)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield "http://127.0.0.1:%d" % srv.server_address[1]
    srv.shutdown()
    srv.server_close()


VERDICT = {"schema": "v1", "task": "vector_add", "status": "correct", "feedback": "ok", "speedup": None}
GROUP = {"schema": "v1", "group": "ab" * 16, "task": "vector_add", "finished": False, "dcp": "expand",
         "attempts": [{"attempt": 0, "state": "awaiting_turn", "end": "none", "next_turn": 2,
                       "turns": [{"turn": 1, "verdict": dict(VERDICT, status="wrong_answer")}]}]}
BUSY = (429, {"Retry-After": "0.3"}, {"schema": "v1", "error": {"status": 429, "message": "busy"}})


def with_client(url, k, call, **kw):
    """call(env) with the blocking client (k = 0) or the asyncio one (k = 1)."""
    import leap_env
    if k == 0:
        return call(leap_env.LeapEnv(url, **kw))

    async def go():
        async with leap_env.AsyncLeapEnv(url, **kw) as env:
            return await call(env)

    return asyncio.run(go())


@pytest.mark.parametrize("k", [0, 1], ids=["blocking", "asyncio"])
def test_retry_after_is_waited_and_results_are_typed(scripted, k):
    import leap_env
    Script.answers["/v1/check"] = [BUSY, BUSY, (200, {}, VERDICT)]
    t0 = time.monotonic()
    v = with_client(scripted, k, lambda env: env.check("vector_add", "src"), backoff=5)
    assert time.monotonic() - t0 >= 0.6  # two Retry-After: 0.3, not the 5 s back-off
    assert len(Script.seen) == 3
    assert isinstance(v, leap_env.Verdict) and v.status == "correct" and v["status"] == "correct"
    assert v.correct and v.speedup is None and v.raw["feedback"] == "ok"


@pytest.mark.parametrize("k", [0, 1], ids=["blocking", "asyncio"])
def test_opening_a_group_is_retried_only_when_the_server_did_nothing(scripted, k):
    import leap_env
    Script.answers["/v1/groups"] = [(503, {"Retry-After": "0"}, {}), (200, {}, GROUP)]
    g = with_client(scripted, k, lambda env: env.open_group("vector_add", sources=["a"]))
    assert isinstance(g, leap_env.Group) and g.awaiting()[0].next_turn == 2
    assert g.attempts[0].last_verdict.status == "wrong_answer"
    assert g["attempts"][0]["state"] == "awaiting_turn"  # the dict view of leap_env 0.1
    for failure in [(504, {}, {"error": {"status": 504, "message": "late"}}), ("drop", {}, {})]:
        Script.answers["/v1/groups"] = [failure, (200, {}, GROUP)]
        with pytest.raises(leap_env.LeapError) as e:
            with_client(scripted, k, lambda env: env.open_group("vector_add", sources=["a"]), backoff=0.01)
        assert e.value.status == (504 if failure[0] == 504 else 0) and e.value.tries == 1
    # A check (idempotent) is retried after a 504 and after a lost connection.
    for failure in [(504, {}, {}), ("drop", {}, {})]:
        Script.answers["/v1/check"] = [failure, (200, {}, VERDICT)]
        v = with_client(scripted, k, lambda env: env.check("vector_add", "s"), backoff=0.01)
        assert v.status == "correct"


def test_the_async_client_keeps_many_calls_on_few_kept_alive_connections(scripted):
    import leap_env
    Script.answers["/v1/check"] = [(200, {}, VERDICT)]

    async def go():
        async with leap_env.AsyncLeapEnv(scripted, max_connections=8) as env:
            return await asyncio.gather(*(env.check("vector_add", str(i)) for i in range(200)))

    vs = asyncio.run(go())
    assert [v.status for v in vs] == ["correct"] * 200
    assert len(Script.seen) == 200
    assert 1 <= Script.connections <= 8, Script.connections
    # The blocking client reuses its connection too.
    Script.connections = 0
    env = leap_env.LeapEnv(scripted)
    for i in range(20):
        env.check("vector_add", str(i))
    assert Script.connections == 1
    env.close()
