"""A TRL `reward_funcs` callable backed by `leap serve`:

    from leap_env import LeapReward
    trainer = GRPOTrainer(model=..., reward_funcs=[LeapReward()], train_dataset=ds, ...)
    # ds has a "task" column (the leap task of each prompt); TRL passes it to the reward
    # function as task=[...], one per completion. Or LeapReward(task="vector_add").

Each call checks the whole batch's completions at once (all in flight on the asyncio client) and
returns one float per completion: 1.0 when the completion's kernel is correct, else 0.0, or your
own `score(verdict)`. Run as a script, it calls it the way GRPOTrainer does, with standard
(string) and conversational (message list) completions, and prints the rewards as JSON.
"""
import json
import sys

from leap_env import LeapReward


def speedup_bonus(verdict):
    """An example `score`: correct earns 1, plus a tenth of the measured speedup (at most 10x; timed on a GPU only)."""
    if verdict.status != "correct":
        return 0.0
    return 1.0 + (max(0.0, min(verdict.speedup, 10.0)) / 10.0 if verdict.speedup else 0.0)


def main(task, good_file, bad_file):
    good = "```cuda\n" + open(good_file).read() + "```"
    bad = "```cuda\n" + open(bad_file).read() + "```"
    reward = LeapReward(score=speedup_bonus)  # the task comes from the dataset's "task" column
    prompts = ["Write vector_add."] * 4
    standard = reward(prompts=prompts, completions=[good, bad, good, "no code"], task=[task] * 4)
    conversational = reward(
        prompts=[[{"role": "user", "content": p}] for p in prompts[:2]],
        completions=[[{"role": "assistant", "content": good}], [{"role": "assistant", "content": bad}]],
        task=[task] * 2)
    fixed = LeapReward(task=task)(prompts=prompts[:2], completions=[bad, good])
    return {"name": reward.__name__, "standard": standard, "conversational": conversational,
            "fixed_task": fixed, "statuses": [v.status for v in reward.last_verdicts]}


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: trl_reward.py TASK GOOD.cu BAD.cu   (server: $LEAP_SERVE_URL)")
    print(json.dumps(main(*sys.argv[1:])))
