"""`leap serve` speaking OpenEnv's HTTP protocol (docs/serve.md "OpenEnv"), driven by a client
written from the protocol (meta-pytorch/OpenEnv src/openenv/core/env_server/http_server.py and
types.py) with the standard library only: POST /reset -> {"observation", "reward", "done"},
POST /step {"action", "episode_id"} -> the same shape, GET /state, /health, /metadata, /schema.
"""
import concurrent.futures
import json
import os
import urllib.error
import urllib.request

import pytest

from leap_server import LeapServer

CANDIDATES = "tests/env/candidates/vector_add"


class OpenEnvClient:
    """An OpenEnv HTTP client: urllib and json, nothing else."""

    def __init__(self, base_url, token=None):
        self.base_url = base_url.rstrip("/")
        self.token = token

    def call(self, method, path, body=None, raw=None):
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(req, timeout=300) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def ok(self, method, path, body=None):
        status, j = self.call(method, path, body)
        assert status == 200, (status, j)
        return j

    def reset(self, **kw):
        return self.ok("POST", "/reset", kw)

    def step(self, episode_id, action):
        return self.ok("POST", "/step", {"episode_id": episode_id, "action": action})

    def state(self, episode_id):
        return self.ok("GET", "/state?episode_id=" + episode_id)


@pytest.fixture(scope="module")
def server(leap_binary):
    srv = LeapServer(leap_binary, extra_sets=("executor.workers=2",))
    yield srv
    srv.stop()


@pytest.fixture
def client(server):
    return OpenEnvClient(server.base_url)


def source(source_dir, name):
    return (source_dir / CANDIDATES / name).read_text()


def test_health_metadata_and_schema(client):
    assert client.ok("GET", "/openenv/health") == {"status": "healthy"}
    meta = client.ok("GET", "/metadata")
    assert meta["name"] == "leap" and isinstance(meta["description"], str)
    assert set(meta) <= {"name", "description", "readme_content", "version", "author",
                         "documentation_url"}  # EnvironmentMetadata forbids other fields
    schema = client.ok("GET", "/schema")
    assert set(schema) == {"action", "observation", "state"}
    assert {"code", "completion"} <= set(schema["action"]["properties"])
    assert {"episode_id", "step_count"} <= set(schema["state"]["properties"])
    # The same routes under /openenv, a base URL whose /health is OpenEnv's.
    assert client.ok("GET", "/openenv/metadata") == meta
    assert client.ok("GET", "/openenv/schema") == schema


def test_a_wrong_step_then_a_correct_one_solves_the_episode_on_turn_2(client, source_dir):
    r = client.reset(task="vector_add", seed=3)
    assert set(r) == {"observation", "reward", "done"}
    assert r["reward"] is None and r["done"] is False
    obs = r["observation"]
    ep = obs["episode_id"]
    assert obs["task"] == "vector_add" and obs["turn"] == 0 and obs["next_turn"] == 1
    assert "vector_add" in obs["prompt"] or obs["description"] in obs["prompt"]
    assert client.state(ep) == {"episode_id": ep, "step_count": 0, "task": "vector_add",
                                "group": None, "next_turn": 1, "done": False, "reward": None,
                                "step_running": False}

    s1 = client.step(ep, {"code": source(source_dir, "wrong_answer.cu")})
    assert set(s1) == {"observation", "reward", "done"}
    assert s1["reward"] == 0.0 and s1["done"] is False
    o1 = s1["observation"]
    assert o1["status"] == "wrong_answer" and o1["turn"] == 1 and o1["next_turn"] == 2
    assert o1["feedback"] and o1["feedback"] in o1["prompt"]  # the feedback is the next prompt's
    assert o1["state"] == "awaiting_turn" and "group_reward" not in o1

    s2 = client.step(ep, {"code": source(source_dir, "grid_stride.cu"), "tokens": 120})
    assert s2["reward"] == 1.0 and s2["done"] is True
    o2 = s2["observation"]
    assert o2["status"] == "correct" and o2["end"] == "solved" and o2["solved_turn"] == 2
    assert o2["next_turn"] == 0 and o2["prompt"] == ""
    # The group API's numbers for a one-attempt group: the rank reward of one player is 0.
    assert o2["group_reward"] == 0.0 and len(o2["advantages"]) == 2
    assert o2["group"] == client.state(ep)["group"]

    st = client.state(ep)
    assert st["step_count"] == 2 and st["done"] is True and st["reward"] == 1.0
    status, err = client.call("POST", "/step", {"episode_id": ep, "action": {"code": "x"}})
    assert status == 409 and "episode_id" in err["detail"] and "done" in err["detail"]


def test_a_completion_is_extracted_and_three_failures_run_out_of_turns(client, source_dir):
    ep = client.reset(task="vector_add")["observation"]["episode_id"]
    good = "Here it is:\n```cuda\n" + source(source_dir, "grid_stride.cu") + "```\n"
    bad = client.step(ep, {"completion": "no code in this answer"})
    assert bad["observation"]["status"] == "rejected" and bad["reward"] == 0.0
    assert not bad["done"]
    for turn in (2, 3):
        s = client.step(ep, {"code": source(source_dir, "compile_error.cu")})
        assert s["observation"]["turn"] == turn and s["observation"]["status"] == "compile_error"
    assert s["done"] is True and s["reward"] == 0.0
    assert s["observation"]["end"] == "out_of_turns"  # train.max_turns = 3
    # A completion that does hold code is judged as its extracted code.
    ep2 = client.reset(task="vector_add")["observation"]["episode_id"]
    s = client.step(ep2, {"completion": good})
    assert s["reward"] == 1.0 and s["done"] is True and s["observation"]["end"] == "solved"


def test_a_reset_drawn_from_a_split_with_a_seed_is_reproducible(client):
    tasks = {t["name"]: t["split"] for t in client.ok("GET", "/v1/tasks")["tasks"]}
    drawn = [client.reset(split="eval", seed=s)["observation"] for s in range(8)]
    assert all(tasks[o["task"]] == "eval" and o["split"] == "eval" for o in drawn)
    assert len({o["task"] for o in drawn}) > 1
    again = [client.reset(split="eval", seed=s)["observation"]["task"] for s in range(8)]
    assert again == [o["task"] for o in drawn]
    assert [o["seed"] for o in drawn] == list(range(8))
    # No task and no split: drawn from train; without a seed the answer says which was used.
    o = client.reset()["observation"]
    assert tasks[o["task"]] == "train"
    assert client.reset(seed=o["seed"])["observation"]["task"] == o["task"]


def test_many_episodes_step_at_once(client, source_dir):
    wrong, right = source(source_dir, "wrong_answer.cu"), source(source_dir, "grid_stride.cu")

    def episode(i):
        ep = client.reset(task="vector_add", episode_id="concurrent-%d" % i)["observation"]["episode_id"]
        first = client.step(ep, {"code": wrong})
        second = client.step(ep, {"code": right})
        return ep, first["reward"], second["reward"], second["done"]

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(episode, range(8)))
    assert results == [("concurrent-%d" % i, 0.0, 1.0, True) for i in range(8)]
    status, err = client.call("POST", "/reset", {"task": "vector_add", "episode_id": "concurrent-0"})
    assert status == 409 and "episode_id" in err["detail"]


@pytest.mark.parametrize("method,path,body,status,words", [
    ("POST", "/reset", b"{not json", 422, "malformed JSON"),
    ("POST", "/reset", {"task": "no_such_task"}, 404, "field task"),
    ("POST", "/reset", {"task": "vector_add", "split": "eval"}, 422, "task and split"),
    ("POST", "/reset", {"split": "test"}, 422, "field split"),
    ("POST", "/reset", {"seed": -1}, 422, "field seed"),
    ("POST", "/reset", {"episode_id": "a b"}, 422, "field episode_id"),
    ("POST", "/reset", {"tsk": "vector_add"}, 422, "'tsk'"),
    ("POST", "/step", {"action": {"code": "x"}}, 422, "'episode_id'"),
    ("POST", "/step", {"episode_id": "nope", "action": {"code": "x"}}, 404, "episode_id"),
    ("POST", "/step", {"episode_id": "nope"}, 422, "'action'"),
    ("POST", "/step", {"episode_id": "nope", "action": {"cod": "x"}}, 422, "action.cod"),
    ("POST", "/step", {"episode_id": "nope", "action": {"code": 1}}, 422, "action.code"),
    ("POST", "/step", {"episode_id": "nope", "action": {"code": "x"}, "timeout_s": 0}, 422, "timeout_s"),
    ("GET", "/state", None, 422, "episode_id"),
    ("GET", "/state?episode_id=nope", None, 404, "episode_id"),
    ("GET", "/reset", None, 405, "POST"),
])
def test_bad_requests_are_4xx_naming_the_field(client, method, path, body, status, words):
    raw = body if isinstance(body, bytes) else None
    got, err = client.call(method, path, None if raw else body, raw=raw)
    assert got == status, err
    assert words in err["error"]["message"], err
    if status != 405:
        assert err["detail"] == err["error"]["message"]  # FastAPI's field, which OpenEnv clients read


def test_a_token_is_required_when_the_server_has_one(leap_binary, monkeypatch):
    monkeypatch.setenv("LEAP_SERVE_TOKEN", "openenv-secret")
    srv = LeapServer(leap_binary)
    try:
        anon = OpenEnvClient(srv.base_url)
        status, err = anon.call("POST", "/reset", {"task": "vector_add"})
        assert status == 401, err
        assert anon.call("GET", "/health")[0] == 200  # leap's own health needs no token
        assert anon.call("GET", "/openenv/health")[0] == 200  # nor OpenEnv's (a liveness probe)
        wrong = OpenEnvClient(srv.base_url, token="not-it")
        assert wrong.call("GET", "/schema")[0] == 401
        ok = OpenEnvClient(srv.base_url + "/openenv", token="openenv-secret")
        assert ok.ok("GET", "/health") == {"status": "healthy"}
        ep = ok.reset(task="vector_add")["observation"]["episode_id"]
        assert ok.state(ep)["episode_id"] == ep
    finally:
        srv.stop()
