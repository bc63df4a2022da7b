"""A client for `episode-factory env serve`, standard library only.

Start a server with::

    episode-factory env serve tool-world-v1 --port 8940 --out datasets/online

then drive episodes Gymnasium-style::

    from episode_factory_env import EpisodeFactoryEnv

    env = EpisodeFactoryEnv("http://127.0.0.1:8940")
    observation, info = env.reset(task="assignee-email", seed=3, agent="my-model")
    # observation["messages"]: [system, user] in OpenAI chat shape
    # observation["tools"]:    [{"type": "function", "function": {name, description, parameters}}]
    message = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "get_issue", "arguments": '{"number": 12}'}}]}
    observation, reward, terminated, truncated, info = env.step(message)
    ...
    env.record()   # replay-verified, appended to the server's --out
    env.close()

or score completions as a TRL GRPO reward function (see make_reward_function).

The observation after a step holds the whole conversation so far
(``observation["messages"]``) and what this step added (``info["new_messages"]``).
Tool calls are renumbered by the server (``call_1``, ``call_2``, ...); the
conversation keeps the server's ids, and ``info["tool_call_ids"]`` maps the ids
you sent to them.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Optional

__all__ = ["EpisodeFactoryEnv", "EnvError", "make_reward_function", "prompt_rows", "completion_turns"]

# Outcomes that end an episode by a limit rather than by the agent: Gymnasium's `truncated`.
TRUNCATING_OUTCOMES = {"step_limit", "tool_call_limit", "wall_time_limit"}


class EnvError(Exception):
    """The server refused a request: `status` is the HTTP status, `code`, `field` and `fix` come from its JSON error."""

    def __init__(self, status: int, body: Any):
        error = body.get("error", {}) if isinstance(body, dict) else {}
        self.status = status
        self.code = error.get("code", "http_error")
        self.field = error.get("field")
        self.fix = error.get("fix")
        self.problems = error.get("problems")
        self.body = body
        message = error.get("message") or str(body)
        super().__init__(f"{status} {self.code}: {message}" + (f" (fix: {self.fix})" if self.fix else ""))


def keep_record(env: "EpisodeFactoryEnv") -> Optional[str]:
    """Keeps env's finished episode as a record and returns its record_id. A rollout the server's --out holds already
    (a rerun under the same agent name) is not kept twice: the id of the one it holds comes back instead."""
    try:
        return env.record()["record_id"]
    except EnvError as error:
        if error.code != "duplicate_record":
            raise
        return error.body.get("existing_record_id") if isinstance(error.body, dict) else None


class RolloutCounter:
    """The next rollout of each (task, seed): 0, 1, ... in the order asked, from any thread. Each GRPO adapter numbers
    its group's rollouts with one, so every rollout is kept as its own record."""

    def __init__(self):
        self._next: dict = {}
        self._lock = threading.Lock()

    def next(self, task: Any, seed: Any) -> int:
        key = (json.dumps(task), json.dumps(seed))
        with self._lock:
            rollout = self._next.get(key, 0)
            self._next[key] = rollout + 1
        return rollout


class _Http:
    def __init__(self, url: str, timeout: float):
        self.url = url.rstrip("/")
        self.timeout = timeout

    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            text = error.read().decode("utf-8", "replace")
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = {"error": {"code": "http_error", "message": text}}
            raise EnvError(error.code, parsed) from None


class EpisodeFactoryEnv:
    """One episode at a time against an `env serve` server, with Gymnasium's reset/step signatures.

    Open several instances (one per thread) to run episodes in parallel: each episode has its own world on the server.
    """

    def __init__(self, url: str, timeout: float = 120.0):
        self._http = _Http(url, timeout)
        self.episode_id: Optional[str] = None
        self.messages: list = []
        self.tools: list = []
        self.done = False
        self.last_reward: Optional[dict] = None

    # The lane: its tasks, seeds and limits.
    def tasks(self) -> dict:
        """GET /tasks: {lane, lane_sha256, tasks: [{id, title}], seeds, seed_range, limits, ...}."""
        return self._http.request("GET", "/tasks")

    def reset(self, task: Optional[str] = None, seed: Optional[int] = None, agent: Any = None, options: Optional[dict] = None, rollout: Optional[int] = None):
        """Opens a new episode, closing this instance's previous one (keep that first with record()). Returns (observation, info).

        task may be omitted when the lane has one task; seed defaults to the lane's first seed; agent is a name
        ("my-model") or {"name": ..., "version": ...} and names the record's policy actor. rollout (0, 1, ...)
        numbers one of a GRPO group's rollouts of the same task and seed, so that each is kept as its own record.
        `options` may carry the same keys, Gymnasium-style.
        """
        options = dict(options or {})
        task = task if task is not None else options.get("task")
        seed = seed if seed is not None else options.get("seed")
        agent = agent if agent is not None else options.get("agent")
        rollout = rollout if rollout is not None else options.get("rollout")
        if self.episode_id is not None:
            self.close()
        body = {key: value for key, value in (("task", task), ("seed", seed), ("agent", agent), ("rollout", rollout)) if value is not None}
        answer = self._http.request("POST", "/reset", body)
        self.episode_id = answer["episode_id"]
        self.messages = list(answer["messages"])
        self.tools = list(answer["tools"])
        self.done = bool(answer.get("done"))
        self.last_reward = answer.get("reward")
        info = {"episode_id": self.episode_id, "task": answer["task"], "seed": answer["seed"], "agent": answer["agent"]}
        if "rollout" in answer:
            info["rollout"] = answer["rollout"]
        return self._observation(), info

    def step(self, message: Any):
        """Sends one assistant turn. Returns (observation, reward, terminated, truncated, info).

        `message` is an OpenAI assistant message {"role": "assistant", "content": ..., "tool_calls": [...]} (arguments a
        JSON string or an object), or a plain string for a text turn. A text turn is the final answer, unless the task
        has a user simulator, whose reply then comes back in info["new_messages"]. reward is 0.0 until the episode is
        done, then 1.0 when every hidden predicate passed, else 0.0; info["reward_details"] has each predicate's verdict.
        """
        if self.episode_id is None:
            raise RuntimeError("call reset() first")
        if isinstance(message, str):
            message = {"role": "assistant", "content": message}
        answer = self._http.request("POST", "/step", {"episode_id": self.episode_id, "message": message})
        if answer.get("assistant") is not None:
            self.messages.append(answer["assistant"])
        self.messages.extend(answer["messages"])
        if "tools" in answer:
            self.tools = list(answer["tools"])
        self.done = bool(answer["done"])
        details = answer.get("reward")
        self.last_reward = details
        outcome = answer.get("outcome")
        truncated = self.done and outcome in TRUNCATING_OUTCOMES
        terminated = self.done and not truncated
        info = {
            "new_messages": answer["messages"],
            "assistant": answer.get("assistant"),
            "tool_call_ids": answer.get("tool_call_ids", {}),
            "applied": answer.get("applied", True),
            "outcome": outcome,
            "reward_details": details,
        }
        reward = float(details["reward"]) if details else 0.0
        return self._observation(), reward, terminated, truncated, info

    def record(self) -> dict:
        """Keeps the finished episode as a record: replay-verified by the server on a fresh world and, when the server
        runs with --out, appended to that dataset. Returns {record_id, verified, written, record, ...}."""
        if self.episode_id is None:
            raise RuntimeError("call reset() first")
        return self._http.request("POST", f"/episodes/{self.episode_id}/record")

    def status(self) -> dict:
        return self._http.request("GET", f"/episodes/{self.episode_id}")

    def close(self) -> None:
        """Closes the episode on the server (its world is disposed). Safe to call twice."""
        if self.episode_id is None:
            return
        episode_id, self.episode_id = self.episode_id, None
        try:
            self._http.request("DELETE", f"/episodes/{episode_id}")
        except EnvError as error:
            if error.status != 404:
                raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _observation(self) -> dict:
        return {"messages": list(self.messages), "tools": list(self.tools)}


def prompt_rows(url: str, seeds: Iterable[int], tasks: Optional[Iterable[str]] = None, agent: Any = None, with_tools: bool = True) -> list:
    """Rows for a training dataset: {prompt: [system, user], tools, task, seed} for every (task, seed), read from the
    server (each episode is opened and closed again). `task` and `seed` are the columns the reward function reads.
    with_tools=False leaves out `tools`: with an environment_factory, TRL lists the environment's methods instead."""
    env = EpisodeFactoryEnv(url)
    task_ids = list(tasks) if tasks is not None else [task["id"] for task in env.tasks()["tasks"]]
    rows = []
    for task in task_ids:
        for seed in seeds:
            observation, _info = env.reset(task=task, seed=seed, agent=agent)
            row = {"prompt": observation["messages"], "tools": observation["tools"], "task": task, "seed": seed}
            if not with_tools:
                del row["tools"]
            rows.append(row)
            env.close()
    return rows


# Refusals of a step that the completion itself caused: what it sent was malformed, or nested deeper than the server takes.
_COMPLETION_REFUSALS = {"invalid_request", "body_too_deep"}

_TOOL_CALL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def completion_turns(completion: Any) -> list:
    """The assistant turns of one completion, as the reward function sends them.

    - A list of messages (TRL's conversational completions): its assistant messages in order; tool and user messages in
      it are ignored, since the server answers every call itself.
    - A string: one turn whose tool calls are the <tool_call>{"name": ..., "arguments": {...}}</tool_call> blocks in it
      (the Hermes / Qwen format), then a second turn with the text outside the blocks as the final answer. A string
      without blocks is one final answer.
    """
    if isinstance(completion, str):
        calls = []
        for index, block in enumerate(_TOOL_CALL_BLOCK.findall(completion)):
            try:
                parsed = json.loads(block)
                name, arguments = parsed.get("name", ""), parsed.get("arguments", {})
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments)
            except (ValueError, AttributeError, RecursionError):
                # Not JSON, or nested past Python's own recursion limit: the block goes as it is, and the server judges it.
                name, arguments = "", block
            calls.append({"id": f"t{index}", "type": "function", "function": {"name": name or "unparsed_tool_call", "arguments": arguments}})
        text = _TOOL_CALL_BLOCK.sub("", completion).strip()
        if not calls:
            return [{"role": "assistant", "content": text}]
        return [{"role": "assistant", "content": "", "tool_calls": calls}, {"role": "assistant", "content": text}]
    turns = []
    for message in completion:
        if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
            turn = {"role": "assistant", "content": message.get("content") or ""}
            if message.get("tool_calls"):
                turn["tool_calls"] = message["tool_calls"]
            turns.append(turn)
    return turns


def make_reward_function(
    url: str,
    task_key: str = "task",
    seed_key: str = "seed",
    agent: Any = "trl-grpo",
    reward_key: str = "reward",
    keep_records: bool = False,
    max_workers: int = 8,
) -> Callable[..., list]:
    """A reward function in TRL GRPO's shape: reward_function(completions, **kwargs) -> list[float].

    Each completion is replayed against a fresh episode of (kwargs[task_key][i], kwargs[seed_key][i]) (the dataset's
    columns; prompt_rows() builds such a dataset): its assistant turns (see completion_turns) are sent step by step,
    and when they run out before the episode is done an empty final answer ends it. The reward is the episode's
    `reward` (1.0 when every hidden predicate passed) or, with reward_key="completed", 1.0 only when the record's
    task_completed is true (also a final answer and no unsupported claim). With keep_records, each episode is kept as a
    replay-verified record (in the server's --out), numbered as the next rollout of its (task, seed)'s GRPO group
    (counted by this function, in completion order), so every completion of a group is kept; a new reward function
    counts from 0 again, so name the agent per run (a rollout the --out already holds is not kept twice). A step
    the server refuses as malformed (or nested too deep) scores 0.0 and is printed; any other refusal (the server full,
    an episode that failed, a task that cannot be set up on the row's seed) raises EnvError, since it says nothing about
    the completion.
    """

    # Rollouts are numbered before the completions are scored in parallel, so in their order.
    rollouts = RolloutCounter()

    def score(index: int, completion: Any, kwargs: dict, rollout: int) -> float:
        task = _column(kwargs, task_key, index)
        seed = _column(kwargs, seed_key, index)
        env = EpisodeFactoryEnv(url)
        try:
            env.reset(task=task, seed=seed, agent=agent, rollout=rollout)
            details = env.last_reward if env.done else None
            for turn in completion_turns(completion):
                if env.done:
                    break
                _obs, _reward, _terminated, _truncated, info = env.step(turn)
                details = info["reward_details"]
            if not env.done:
                _obs, _reward, _terminated, _truncated, info = env.step({"role": "assistant", "content": ""})
                details = info["reward_details"]
            if keep_records:
                keep_record(env)
            if not details:
                return 0.0
            return 1.0 if (details["completed"] if reward_key == "completed" else details["reward"] == 1) else 0.0
        except EnvError as error:
            # Only a step the server refused for its content (a malformed message, or one nested too deep) is the
            # completion's doing; a server that is full, failing, or cannot set up the row's task says nothing about
            # it, and must not train it.
            if error.code not in _COMPLETION_REFUSALS or error.field in (task_key, seed_key, "task", "seed"):
                raise
            print(f"episode_factory_env: completion {index}: {error}")
            return 0.0
        finally:
            env.close()

    def reward_function(completions, **kwargs) -> list:
        numbered = [rollouts.next(_column(kwargs, task_key, index), _column(kwargs, seed_key, index)) for index in range(len(completions))]
        with ThreadPoolExecutor(max_workers=max(1, max_workers)) as pool:
            return list(pool.map(lambda item: score(item[0], item[1], kwargs, numbered[item[0]]), enumerate(completions)))

    reward_function.__name__ = "episode_factory_reward"
    return reward_function


def _column(kwargs: dict, key: str, index: int) -> Any:
    value = kwargs.get(key)
    if isinstance(value, (list, tuple)):
        return value[index]
    return value
