"""Drives clients/python/verifiers_environment.py the way verifiers drives a MultiTurnEnv, and reports.

A stub of verifiers' calling convention (verifiers does not install on this machine), written from
github.com/PrimeIntellect-ai/verifiers at commit a60a606ecc4d309247edf9ff92c3eabca362781f (v0.3.0-62; `vf.*` is
verifiers/legacy):
- envs/environment.py: _format_dataset adds example_id; init_state copies the row into state["input"], parses an
  info given as a JSON string, normalizes the prompt into message objects, sets tool_defs from info["tool_defs"],
  trajectory [], reward None, error None, final_env_response None; is_completed runs every method marked @vf.stop
  (discover_decorated: by descending stop_priority, then name), each called with the arguments it names of
  (state, env), and sets is_completed / stop_condition; cleanup runs the @vf.cleanup methods the same way;
  run_group gathers the rollouts of a group, then the rubric scores them;
- envs/multiturn_env.py: MultiTurnEnv's own stop conditions (has_error at priority 100, prompt_too_long,
  max_turns_reached, has_final_env_response), its rollout loop (setup_state; while not is_completed(state):
  get_prompt_messages, which after the first turn concatenates the last prompt and completion and appends
  env_response(messages, state), normalized; `continue` when final_env_response is set; one model turn appended to
  the trajectory as {prompt, completion}; finally cleanup), and render_state (priority-100 cleanup: the completion is
  the conversation after state["prompt"], plus final_env_response);
- utils/message_utils.py: raw dict messages become message objects, an OpenAI tool call becomes ToolCall(id, name,
  arguments: str), and a tool message must carry tool_call_id and content (pydantic refuses it otherwise);
- rubrics/rubric.py: score_rollout calls each reward function with the arguments it names of (prompt, completion,
  answer, state, info, task, parser), a function that raises scores 0.0, and the reward is the weighted sum.

    python verifiers_stub.py ENV_URL script.json

script.json: {"agent", "keep_records", "max_turns", "tasks", "seeds", "groups": [{"task", "seed", "rollouts":
[{"turns": [{"calls": [[name, arguments]], "text": "..."}]}]}]}; arguments given as a string are sent as written.
"""

import asyncio
import inspect
import json
import os
import sys
from copy import deepcopy

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "python"))

from verifiers_environment import EpisodeFactoryMultiTurnEnv  # noqa: E402


class Message(dict):
    """verifiers' CustomBaseModel: attribute access and dict access to the same fields."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


REQUIRED = {"system": ("content",), "user": ("content",), "assistant": (), "tool": ("tool_call_id", "content")}


def normalize(messages):
    out = []
    for message in messages:
        message = Message(message)
        missing = [key for key in REQUIRED[message["role"]] if not isinstance(message.get(key), (str, list))]
        if missing:
            raise TypeError(f"a {message['role']} message without {missing}: {dict(message)}")
        if message["role"] == "assistant" and message.get("tool_calls"):
            message["tool_calls"] = [call if isinstance(call, Message) else Message(
                id=call.get("id") or call["function"]["name"], name=call["function"]["name"],
                arguments=call["function"]["arguments"] if isinstance(call["function"]["arguments"], str) else json.dumps(call["function"]["arguments"]))
                for call in message["tool_calls"]]
        out.append(message)
    return out


def discover(obj, attr):
    methods = [getattr(obj, name) for name in dir(obj) if not name.startswith("__") and inspect.ismethod(getattr(obj, name, None)) and hasattr(getattr(obj, name), attr)]
    return sorted(methods, key=lambda method: (-getattr(method, f"{attr}_priority", 0), method.__name__))


async def call_with_named_args(func, **objects):
    parameters = inspect.signature(func).parameters
    if not any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
        objects = {key: value for key, value in objects.items() if key in parameters}
    result = func(**objects)
    return await result if inspect.isawaitable(result) else result


class MultiTurnFramework:
    """What vf.MultiTurnEnv and vf.Environment add around a subclass: stop conditions, the loop, cleanup, scoring."""

    def __init__(self, env):
        self.env = env
        builtins = {method.__name__: method for method in (self.has_error, self.prompt_too_long, self.max_turns_reached, self.has_final_env_response)}
        # A subclass's method of the same name overrides the framework's, as inheritance would.
        self.stops = sorted({**builtins, **{method.__name__: method for method in discover(env, "stop")}}.values(),
                            key=lambda method: (-getattr(method, "stop_priority", 0), method.__name__))
        self.cleanups = sorted([self.render_state] + discover(env, "cleanup"), key=lambda method: (-getattr(method, "cleanup_priority", 0), method.__name__))

    async def has_error(self, state):
        return state.get("error") is not None
    has_error.stop_priority = 100

    async def prompt_too_long(self, state):
        return state.get("prompt_too_long", False)

    async def max_turns_reached(self, state):
        return len(state["trajectory"]) >= self.env.max_turns and self.env.max_turns > 0

    async def has_final_env_response(self, state):
        return state.get("final_env_response") is not None

    async def render_state(self, state):
        if not state["trajectory"]:
            state["completion"] = []
            return
        full = state["trajectory"][-1]["prompt"] + state["trajectory"][-1]["completion"]
        if state.get("final_env_response"):
            full = full + normalize(state["final_env_response"])
        state["completion"] = full[len(state["prompt"]):]
    render_state.cleanup_priority = 100

    def init_state(self, row):
        state_input = deepcopy(row)
        if isinstance(state_input.get("info"), str):
            state_input["info"] = json.loads(state_input["info"])
        state = {"input": state_input, "info": state_input["info"], "answer": state_input.get("answer", ""), "example_id": state_input["example_id"]}
        state.update(prompt=normalize(state_input["prompt"]), tool_defs=state_input["info"].get("tool_defs", []), trajectory=[], completion=None,
                     reward=None, metrics=None, error=None, final_env_response=None, is_completed=False, is_truncated=False)
        return state

    async def is_completed(self, state, hooks):
        for condition in self.stops:
            hooks.append(f"stop:{condition.__name__}")
            if await call_with_named_args(condition, state=state, env=self.env):
                state["is_completed"], state["stop_condition"] = True, condition.__name__
                return True
        return False

    async def get_prompt_messages(self, state, hooks):
        if not state["trajectory"]:
            return state["prompt"]
        messages = state["trajectory"][-1]["prompt"] + state["trajectory"][-1]["completion"]
        hooks.append("env_response")
        return messages + normalize(await self.env.env_response(messages, state))

    async def rollout(self, row, script, log):
        state, hooks, model_log = self.init_state(row), log["hooks"], log["model"]
        try:
            hooks.append("setup_state")
            state = await self.env.setup_state(state) or state
            while not await self.is_completed(state, hooks):
                prompt_messages = normalize(await self.get_prompt_messages(state, hooks))
                if state.get("final_env_response") is not None:
                    continue
                turn_index = len(state["trajectory"])
                turn = script[turn_index] if turn_index < len(script) else {"text": ""}
                model_log.append({"tools": [tool["name"] if isinstance(tool, dict) else tool.name for tool in state["tool_defs"]],
                                  "last": [dict(message) for message in prompt_messages[-3:]]})
                calls = [{"id": f"tool_{turn_index}_{i}", "name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}
                         for i, (name, arguments) in enumerate(turn.get("calls", []))]
                completion = Message(role="assistant", content=turn.get("text", ""), tool_calls=[Message(call) for call in calls] or None)
                state["trajectory"].append({"prompt": prompt_messages, "completion": [completion], "reward": None, "is_truncated": False})
        finally:
            for handler in self.cleanups:
                hooks.append(f"cleanup:{handler.__name__}")
                await call_with_named_args(handler, state=state, env=self.env, task=None, resources=None)
        return state

    async def score_rollout(self, state):
        rubric, scores = self.env.rubric, []
        objects = {"prompt": state["prompt"], "completion": state["completion"], "answer": state.get("answer", ""), "state": state,
                   "info": state.get("info", {}), "task": state.get("input"), "parser": None}
        for func in rubric.funcs:
            try:
                scores.append(float(await call_with_named_args(func, **objects)))
            except Exception:
                scores.append(0.0)
        state["metrics"] = {func.__name__: score for func, score in zip(rubric.funcs, scores)}
        state["reward"] = sum(score * weight for score, weight in zip(scores, rubric.weights))

    async def run_group(self, rows, scripts):
        logs = [{"hooks": [], "model": []} for _ in rows]
        states = await asyncio.gather(*(self.rollout(row, script, log) for row, script, log in zip(rows, scripts, logs)))
        for state in states:
            await self.score_rollout(state)
        return states, logs


def dump(message):
    out = {key: value for key, value in dict(message).items() if value is not None}
    if out.get("tool_calls"):
        out["tool_calls"] = [dict(call) for call in out["tool_calls"]]
    return out


async def main(url, script_path):
    with open(script_path, encoding="utf-8") as handle:
        script = json.load(handle)
    env = EpisodeFactoryMultiTurnEnv(url, seeds=script["seeds"], tasks=script["tasks"], agent=script["agent"],
                                     keep_records=script.get("keep_records", False), max_turns=script.get("max_turns", -1))
    rows = [dict(row, example_id=index) for index, row in enumerate(env.dataset)]
    framework = MultiTurnFramework(env)

    async def group(spec):
        row = next(row for row in rows if json.loads(row["info"])["episode_factory"] == {"task": spec["task"], "seed": spec["seed"]})
        states, logs = await framework.run_group([row] * len(spec["rollouts"]), [rollout["turns"] for rollout in spec["rollouts"]])
        return [{"reward": state["reward"], "metrics": state["metrics"], "stop_condition": state.get("stop_condition"),
                 "episode": {key: value for key, value in state["episode_factory"].items() if key != "replies"},
                 "completion": [dump(message) for message in state["completion"]], **log} for state, log in zip(states, logs)]

    groups = await asyncio.gather(*(group(spec) for spec in script["groups"]))
    print(json.dumps({"rows": len(rows), "groups": groups}, default=str))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
