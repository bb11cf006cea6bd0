"""The Python client (clients/python/leap_env.py) against a live `leap serve`; run by
tests/runtime/serve/serve_e2e_test.cpp with LEAP_SERVE_URL (and, for HTTPS, LEAP_SERVE_CAFILE
and LEAP_SERVE_TOKEN) set, and LEAP_SOURCE_DIR naming the repository."""

import concurrent.futures
import os
import sys
import unittest

SRC = os.environ["LEAP_SOURCE_DIR"]
sys.path.insert(0, os.path.join(SRC, "clients", "python"))
import leap_env  # noqa: E402
from leap_env import LeapEnv, LeapError  # noqa: E402

URL = os.environ["LEAP_SERVE_URL"]
CAFILE = os.environ.get("LEAP_SERVE_CAFILE")


def candidate(name):
    with open(os.path.join(SRC, "tests", "env", "candidates", "vector_add", name)) as f:
        return f.read()


class ClientTest(unittest.TestCase):
    def env(self, **kw):
        return LeapEnv(URL, cafile=CAFILE, **kw)

    def test_health_and_tasks(self):
        env = self.env()
        self.assertEqual(env.health()["status"], "ok")
        names = [t["name"] for t in env.tasks()]
        self.assertIn("vector_add", names)
        t = env.task("vector_add")
        self.assertIn("solution", t["signature"])
        self.assertIn(t["description"].split("\n")[0], t["prompt"])

    def test_check_and_errors(self):
        env = self.env()
        self.assertEqual(env.check("vector_add", candidate("grid_stride.cu"))["status"], "correct")
        self.assertEqual(env.check("vector_add", candidate("wrong_answer.cu"))["status"],
                         "wrong_answer")
        self.assertEqual(env.check("vector_add", completion="I would rather not.")["status"],
                         "rejected")
        with self.assertRaises(LeapError) as e:
            env.check("no_such_task", "x")
        self.assertEqual(e.exception.status, 404)

    def test_compute_score_is_a_verl_reward_function(self):
        os.environ["LEAP_SERVE_URL"] = URL
        leap_env._default_env = self.env()
        good = "Here is my kernel:\n```cuda\n" + candidate("grid_stride.cu") + "```\n"
        bad = "```cuda\n" + candidate("wrong_answer.cu") + "```"
        self.assertEqual(leap_env.compute_score("leap", good, "vector_add"), 1.0)
        self.assertEqual(leap_env.compute_score("leap", bad, "", {"task": "vector_add"}), 0.0)

    def test_a_multi_turn_group(self):
        env = self.env()
        g = env.open_group("vector_add", sources=[candidate(n) for n in (
            "grid_stride.cu", "wrong_answer.cu", "compile_error.cu", "do_nothing.cu")])
        self.assertEqual(g["dcp"], "expand")
        fixed = candidate("float4_gridstride.cu")
        for _ in range(3):
            for a in [a for a in g["attempts"] if a["state"] == "awaiting_turn"]:
                g = env.turn(g["group"], a["attempt"], a["next_turn"], source=fixed)
                # A retried turn is answered with the first one's outcome.
                again = env.turn(g["group"], a["attempt"], a["next_turn"], source=fixed)
                self.assertEqual(len(again["attempts"][a["attempt"]]["turns"]), a["next_turn"])
        g = env.group(g["group"])
        self.assertTrue(g["finished"])
        self.assertAlmostEqual(sum(g["rewards"]), 0.0)
        self.assertEqual(g["attempts"][0]["solved_turn"], 1)
        self.assertGreater(g["rewards"][0], g["rewards"][1])

    def test_busy_answers_are_retried(self):
        # The server runs with serve.max_queue = 1: concurrent cold checks get 429 and the client
        # waits the Retry-After and asks again until each has its verdict.
        env = self.env(retries=30, backoff=0.2)
        srcs = ["// %d\n" % i + candidate("grid_stride.cu") for i in range(6)]
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            verdicts = list(pool.map(lambda s: env.check("vector_add", s)["status"], srcs))
        self.assertEqual(verdicts, ["correct"] * 6)
        m = env.metrics()
        busy = [l for l in m.splitlines()
                if l.startswith('leap_http_requests_total{route="check",code="429"}')]
        self.assertTrue(busy, "no check was ever refused busy:\n" + m)


if __name__ == "__main__":
    unittest.main(verbosity=2)
