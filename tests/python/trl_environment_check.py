"""Plays episodes through clients/python/trl_environment.py the way TRL's GRPOTrainer does, and reports.

TRL 1.13 (trl/trainer/grpo_trainer.py) finds an environment's tools with
inspect.getmembers(instance, inspect.ismethod) minus reset, get_reward and
private names, renders each with transformers' get_json_schema, calls
reset(**row), calls the methods the model names, then the reward functions
with environments=. This script does the same with the real transformers
function, and prints a JSON report for tests/environment/trl-environment.test.ts:

    python trl_environment_check.py URL plays.json

plays.json: {"agent": ..., "plays": [{"row": {...}, "calls": [[name, arguments], ...], "answer": "..."}]}
"""

import inspect
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "python"))

from transformers.utils import get_json_schema  # noqa: E402

from trl_environment import environment_class, make_environment_reward  # noqa: E402


def main(url, plays_path):
    with open(plays_path, encoding="utf-8") as handle:
        spec = json.load(handle)
    Environment = environment_class(url, agent=spec["agent"])
    probe = Environment()
    tools = [member for name, member in inspect.getmembers(probe, predicate=inspect.ismethod) if name not in ("reset", "get_reward") and not name.startswith("_")]
    schemas = [get_json_schema(tool) for tool in tools]
    reward = make_environment_reward(keep_records=True)
    environments, completions, results = [], [], []
    for play in spec["plays"]:
        environment = Environment()
        environment.reset(**play["row"])
        answers = []
        for name, arguments in play["calls"]:
            answers.append(getattr(environment, name)(**arguments))
        environments.append(environment)
        completions.append([{"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}]} for name, arguments in play["calls"]] + [{"role": "assistant", "content": play["answer"]}])
        results.append(answers)
    scores = reward(completions, environments=environments, prompts=None)
    # A rerun under the same agent name: a new class numbers rollouts from 0 again, so the first play's rollout is one
    # the server's --out holds already. It is scored, not kept twice, and the id of the record it holds comes back.
    again = environment_class(url, agent=spec["agent"])()
    again.reset(**spec["plays"][0]["row"])
    rerun = {"score": reward([[{"role": "assistant", "content": "No idea."}]], environments=[again])[0], "kept": again._record()}
    print(json.dumps({"schemas": schemas, "answers": results, "scores": scores, "episodes": [environment._env.episode_id for environment in environments], "rerun": rerun}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
