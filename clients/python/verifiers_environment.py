"""A verifiers `MultiTurnEnv` over a running `episode-factory env serve`, standard library only.

    from verifiers_environment import load_environment
    env = load_environment(url="http://127.0.0.1:8940", seeds=range(8), agent="vf-run-1", keep_records=True)
    results = env.evaluate_sync(client=client, model="my-model", num_examples=8, rollouts_per_example=4)

(or hand `env` to prime-rl / verifiers' trainer as any verifiers environment). When `verifiers` is importable the class
subclasses the real `vf.MultiTurnEnv`; otherwise it is a plain class with the same hooks, which
tests/python/verifiers_stub.py drives in verifiers' own order (verifiers does not install on the machine this was
written on).

Written from verifiers v0.3.0-62 (github.com/PrimeIntellect-ai/verifiers, commit
a60a606ecc4d309247edf9ff92c3eabca362781f), whose classic stack is `vf.*` = verifiers/legacy:
envs/multiturn_env.py (rollout: init_state, setup_state(state), then `while not is_completed(state)`:
get_prompt_messages, which calls env_response(messages, state) after the first turn, then one model turn; finally
cleanup(state)), envs/environment.py (is_completed is final: it runs the methods marked @vf.stop, highest priority
first; cleanup runs those marked @vf.cleanup; the rubric scores the rollout after it), envs/tool_env.py (a failed
call is a tool message answering it, and the rollout goes on), envs/integrations/openenv_env.py (an environment
served elsewhere: setup_state sets state["prompt"] and state["tool_defs"] from the server's reset), rubrics/rubric.py
(reward functions get the arguments they name: prompt, completion, answer, state, info, ...; the reward is their
weighted sum) and types.py (messages are objects: AssistantMessage.tool_calls of ToolCall(id, name, arguments); a
row's info may be a JSON string; info["task"] is reserved for a task payload, hence info["episode_factory"]).

The mapping:
- A dataset row names its episode in info["episode_factory"] = {task, seed} (dataset_rows() builds rows from the
  server). setup_state opens that episode, as the next rollout of its (task, seed), so a group of
  rollouts_per_example is one GRPO group and each is kept as its own record; state["prompt"] and state["tool_defs"]
  become the episode's own opening and catalog.
- The stop condition `episode_done` (priority 50: before verifiers' max_turns) sends the model's latest turn to the
  server: its tool calls, or its text (a final answer, or a turn the user simulator replies to), and stops the
  rollout when the server says the episode is done. env_response returns what the server answered that turn: one
  tool message per call, under the model's own call ids, then any user reply. A wrong call (unknown tool, bad
  arguments, arguments that are not JSON) is answered by a tool message with the runner's error, as ToolEnv answers
  one, and recorded as the agent's behaviour.
- The cleanup `finish_episode` ends an episode verifiers stopped first (max_turns, an error, a timeout) with an empty
  final answer, keeps the record with keep_records=True, and closes the episode.
- The rubric's reward function `episode_reward` is the server's reward: 1.0 when every hidden predicate passed; the
  metric `episode_completed` (weight 0) is the stricter verdict.

Limits: a verifiers rollout timeout leaves a step in flight on the server, so that episode's finish may fail (it then
scores 0.0 and keeps nothing); the prompt the model sees is the server's, whatever the row's `prompt` says.
"""

import asyncio
import json
from collections.abc import Mapping
from typing import Any, Optional

from episode_factory_env import EnvError, EpisodeFactoryEnv, RolloutCounter, keep_record

try:
    import verifiers as vf

    _MultiTurnEnv, _Rubric, _stop, _cleanup = vf.MultiTurnEnv, vf.Rubric, vf.stop, vf.cleanup
except ImportError:
    vf = None

    class _MultiTurnEnv:
        """verifiers' constructor, kept; the rollout loop and is_completed belong to the framework that drives this."""

        def __init__(self, dataset=None, eval_dataset=None, rubric=None, max_turns: int = -1, **kwargs):
            self.dataset, self.eval_dataset, self.rubric, self.max_turns = dataset, eval_dataset, rubric, max_turns
            for key, value in kwargs.items():
                setattr(self, key, value)

    class _Rubric:
        def __init__(self, funcs=None, weights=None, **kwargs):
            self.funcs = list(funcs or [])
            self.weights = list(weights or [1.0] * len(self.funcs))

    def _marker(attr: str):
        # verifiers' decorators mark a method (attr, attr_priority); its environment discovers them by those marks.
        def mark(func=None, priority: int = 0):
            def decorate(f):
                setattr(f, attr, True)
                setattr(f, f"{attr}_priority", priority)
                return f

            return decorate(func) if func is not None else decorate

        return mark

    _stop, _cleanup = _marker("stop"), _marker("cleanup")


def _field(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(_field(part, "text") or "") for part in content)
    return "" if content is None else str(content)


def _assistant(message: Any) -> dict:
    """A verifiers assistant message (ToolCall objects, or the OpenAI dicts of older versions) in the server's shape."""
    calls = []
    for index, call in enumerate(_field(message, "tool_calls") or []):
        function = _field(call, "function")
        name = _field(function, "name") if function is not None else _field(call, "name")
        arguments = _field(function, "arguments") if function is not None else _field(call, "arguments")
        calls.append({"id": _field(call, "id") or f"vf-{index}", "type": "function",
                      "function": {"name": name or "", "arguments": "{}" if arguments is None else arguments}})
    turn = {"role": "assistant", "content": _text(_field(message, "content"))}
    if calls:
        turn["tool_calls"] = calls
    return turn


def _tool_defs(tools: list) -> list:
    return [{"name": t["function"]["name"], "description": t["function"].get("description", ""),
             "parameters": t["function"].get("parameters", {})} for t in tools]


def dataset_rows(url: str, seeds, tasks=None) -> list:
    """verifiers rows, {prompt, answer, info}, one per (task, seed): the prompt is the episode's opening, and info (a
    JSON string, so that Arrow takes rows whose schemas differ) holds episode_factory {task, seed} and tool_defs."""
    env = EpisodeFactoryEnv(url)
    rows = []
    for task in tasks or [entry["id"] for entry in env.tasks()["tasks"]]:
        for seed in seeds:
            observation, _info = env.reset(task=task, seed=seed)
            info = {"episode_factory": {"task": task, "seed": seed}, "tool_defs": _tool_defs(observation["tools"])}
            rows.append({"prompt": observation["messages"], "answer": "", "info": json.dumps(info)})
            env.close()
    return rows


def episode_reward(state) -> float:
    """The server's reward: 1.0 when every hidden predicate passed, else 0.0."""
    return float(((state.get("episode_factory") or {}).get("reward") or {}).get("reward", 0.0))


def episode_completed(state) -> float:
    """The record's task_completed: every predicate passed, a final answer, and no unsupported claim."""
    return 1.0 if ((state.get("episode_factory") or {}).get("reward") or {}).get("completed") else 0.0


class EpisodeFactoryMultiTurnEnv(_MultiTurnEnv):
    def __init__(self, url: str, dataset=None, eval_dataset=None, seeds=(0,), tasks=None, agent: Any = "verifiers",
                 keep_records: bool = False, timeout: float = 120.0, max_turns: int = -1, **kwargs):
        self.env_url, self.agent, self.keep_records, self.timeout = url, agent, keep_records, timeout
        self._episodes: dict = {}
        self._rollouts = RolloutCounter()
        if dataset is None and eval_dataset is None:
            dataset = dataset_rows(url, seeds, tasks)
        if vf is not None and isinstance(dataset, list):
            from datasets import Dataset  # a dependency of verifiers

            dataset = Dataset.from_list(dataset)
        rubric = kwargs.pop("rubric", None) or _Rubric(funcs=[episode_reward, episode_completed], weights=[1.0, 0.0])
        super().__init__(dataset=dataset, eval_dataset=eval_dataset, rubric=rubric, max_turns=max_turns, **kwargs)

    async def setup_state(self, state, **kwargs):
        info = state.get("info") or {}
        if isinstance(info, str):
            info = json.loads(info)
        target = info.get("episode_factory") or {}
        task, seed = target.get("task"), target.get("seed")
        rollout = self._rollouts.next(task, seed)
        env = EpisodeFactoryEnv(self.env_url, timeout=self.timeout)
        observation, opened = await asyncio.to_thread(env.reset, task=task, seed=seed, agent=self.agent, rollout=rollout)
        self._episodes[env.episode_id] = env
        state["episode_factory"] = {"episode_id": env.episode_id, "task": task, "seed": opened["seed"], "rollout": rollout,
                                    "sent": 0, "replies": [], "reward": env.last_reward}
        state["prompt"] = observation["messages"]
        self._set_tools(state, observation["tools"])
        return state

    @_stop(priority=50)
    async def episode_done(self, state, **kwargs) -> bool:
        """Sends the model's latest turn to the server, and stops when the server says the episode is done."""
        episode = state.get("episode_factory")
        env = self._episodes.get((episode or {}).get("episode_id"))
        if env is None:
            return False
        trajectory = state.get("trajectory") or []
        if len(trajectory) > episode["sent"] and not env.done:
            await self._send(state, env, trajectory[-1]["completion"][-1])
        if env.done and episode["replies"]:
            # The replies to the last turn belong in the completion verifiers renders.
            state["final_env_response"] = episode["replies"]
        return env.done or state.get("error") is not None

    async def env_response(self, messages, state, **kwargs):
        episode = state["episode_factory"]
        env = self._episodes[episode["episode_id"]]
        if len(state.get("trajectory") or []) > episode["sent"] and not env.done:
            await self._send(state, env, messages[-1])
        replies, episode["replies"] = episode["replies"], []
        return replies

    @_cleanup
    async def finish_episode(self, state, **kwargs) -> None:
        episode = state.get("episode_factory")
        env = self._episodes.pop((episode or {}).get("episode_id"), None)
        if env is None:
            return
        try:
            if not env.done:
                await asyncio.to_thread(env.step, {"role": "assistant", "content": ""})
            episode["reward"] = env.last_reward
            if self.keep_records:
                episode["record_id"] = await asyncio.to_thread(keep_record, env)
        except EnvError as error:
            episode["error"] = str(error)
        finally:
            await asyncio.to_thread(env.close)

    async def _send(self, state, env: EpisodeFactoryEnv, message: Any) -> None:
        episode = state["episode_factory"]
        turn, catalog = _assistant(message), env.tools
        episode["sent"], episode["replies"] = len(state.get("trajectory") or []), []
        try:
            _obs, _reward, _terminated, _truncated, info = await asyncio.to_thread(env.step, turn)
        except EnvError as error:
            # A turn the server refused for its own content ends the rollout as verifiers' errors do; anything else
            # (a full or failing server) says nothing about the model, and is raised.
            if error.code not in ("invalid_request", "body_too_deep"):
                raise
            state["error"] = vf.Error(str(error)) if vf is not None else error
            return
        episode["reward"] = env.last_reward
        # The server renumbers calls (call_1, ...); the conversation verifiers keeps has the model's ids.
        committed = (info.get("assistant") or {}).get("tool_calls") or []
        ids = {server["id"]: mine["id"] for server, mine in zip(committed, turn.get("tool_calls", []))}
        episode["replies"] = [
            {"role": "tool", "tool_call_id": ids.get(m.get("tool_call_id"), m.get("tool_call_id")), "content": m["content"]}
            if m["role"] == "tool" else {"role": m["role"], "content": m["content"]}
            for m in info["new_messages"]]
        if env.tools is not catalog:
            # A tool_renamed fault: the model's next turn must see the catalog the world now has.
            self._set_tools(state, env.tools)

    def _set_tools(self, state, tools: list) -> None:
        defs = _tool_defs(tools)
        normalize = getattr(self, "_normalize_tool_defs", None)
        state["tool_defs"] = normalize(defs) if normalize else defs


def load_environment(url: str = "http://127.0.0.1:8940", **kwargs) -> EpisodeFactoryMultiTurnEnv:
    """verifiers' entry point (`vf.load_environment` imports a module and calls this)."""
    return EpisodeFactoryMultiTurnEnv(url, **kwargs)
