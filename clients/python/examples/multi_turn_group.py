"""One LEAP group driven from Python: turn 1 for G attempts, DCP, later turns for the expanded
attempts, then the rank rewards and advantages an external GRPO trainer would use.

    leap serve &                                  # prints: serving on http://127.0.0.1:8420 ...
    python3 clients/python/examples/multi_turn_group.py --task vector_add \\
        tests/env/candidates/vector_add/{grid_stride,wrong_answer,compile_error,do_nothing}.cu \\
        --fix tests/env/candidates/vector_add/float4_gridstride.cu

`policy()` stands in for the model: it answers every later turn with the --fix file. In a real
trainer it samples from the model (vLLM, SGLang, ...) given `next_prompt` (leap's template) or
the attempt's own conversation plus the verdict's `feedback`.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from leap_env import LeapEnv  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default=os.environ.get("LEAP_SERVE_URL", "http://127.0.0.1:8420"))
    ap.add_argument("--task", required=True)
    ap.add_argument("--fix", required=True, help="the source every later turn sends")
    ap.add_argument("sources", nargs="+", help="turn-1 sources, one per attempt (G)")
    args = ap.parse_args()

    env = LeapEnv(args.url)
    fixed = open(args.fix).read()

    def policy(prompt, feedback):
        return fixed

    group = env.open_group(args.task, sources=[open(p).read() for p in args.sources])
    print("turn 1: DCP %s (failed %d, passed %d)" % (group["dcp"], group["turn1"]["failed"],
                                                    group["turn1"]["passed"]))
    while not group["finished"]:
        waiting = [a for a in group["attempts"] if a["state"] == "awaiting_turn"]
        if not waiting:
            group = env.group(group["group"])
            continue
        for a in waiting:
            last = a["turns"][-1]["verdict"]
            group = env.turn(group["group"], a["attempt"], a["next_turn"],
                             source=policy(a["next_prompt"], last["feedback"]))
    for a in group["attempts"]:
        statuses = [t["verdict"]["status"] if t["verdict"] else "lost" for t in a["turns"]]
        print("attempt %d: %-12s turns %s reward %+.3f advantages %s" % (
            a["attempt"], a["end"], statuses, a["reward"], json.dumps(a["advantages"])))


if __name__ == "__main__":
    main()
