"""veRL reward function file: point veRL at it, and it scores responses with `leap serve`.

    custom_reward_function.path=clients/python/examples/verl_reward.py
    custom_reward_function.name=compute_score          # NaiveRewardManager: one response a call
    custom_reward_function.name=compute_score_async    # the async reward loop: awaited on its loop
    custom_reward_function.name=compute_score_batch    # reward_model.reward_manager=batch
    # the server: $LEAP_SERVE_URL (default http://127.0.0.1:8420); the task: the row's
    # ground_truth (or extra_info["task"]); the score: 1.0 when the kernel is correct, else 0.0

veRL loads this file with importlib (spec_from_file_location), so it needs the leap_env package
installed (pip install ./clients/python). Run as a script it scores a few responses the three
ways, as veRL would call them, and prints the scores as JSON.
"""
import asyncio
import importlib.util
import json
import sys

from leap_env import compute_score, compute_score_async, compute_score_batch

__all__ = ["compute_score", "compute_score_async", "compute_score_batch"]


def _demo(task, good_file, bad_file):
    # Load this file as veRL's get_custom_reward_fn does, then call what it found.
    spec = importlib.util.spec_from_file_location("custom_module", __file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    good = "Here is my kernel:\n```cuda\n" + open(good_file).read() + "```\n"
    bad = "```cuda\n" + open(bad_file).read() + "```"
    responses = [good, bad, "I would rather not write CUDA today."]
    extra = {"reward_router_address": None, "reward_model_tokenizer": None}  # the reward loop passes these
    naive = [module.compute_score("leap", r, task, {"index": i}) for i, r in enumerate(responses)]

    async def reward_loop():  # veRL's reward loop: many samples awaited on one loop
        return await asyncio.gather(*(module.compute_score_async(
            data_source="leap", solution_str=r, ground_truth="", extra_info={"task": task}, **extra)
            for r in responses))

    awaited = asyncio.run(reward_loop())
    batch = module.compute_score_batch(data_sources=["leap"] * 3, solution_strs=responses,
                                       ground_truths=[task] * 3, extra_infos=[None] * 3)
    return {"naive": naive, "async": awaited, "batch": batch}


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: verl_reward.py TASK GOOD.cu BAD.cu   (server: $LEAP_SERVE_URL)")
    print(json.dumps(_demo(*sys.argv[1:])))
