"""TRL's `GRPOTrainer(environment_factory=...)` over a running `episode-factory env serve`.

    from episode_factory_env import prompt_rows
    from trl_environment import environment_class, reward_function

    url = "http://127.0.0.1:8940"
    Environment = environment_class(url, agent="grpo-run-1")
    trainer = GRPOTrainer(
        model=model, processing_class=tokenizer,
        environment_factory=Environment, reward_funcs=[reward_function],
        train_dataset=Dataset.from_list(prompt_rows(url, seeds=range(8), with_tools=False)),
        args=GRPOConfig(num_generations=4, max_tool_calling_iterations=6, ...))

How TRL 1.13 uses it (trl/trainer/grpo_trainer.py): it calls `Environment()` for
each rollout (instances are pooled and reset again, never closed), calls
`reset(**row)` with the whole dataset row, offers every public method as a
tool, runs each tool call the model makes as one method call, ends the rollout
at the model's first turn without a call, and then calls the reward functions
with `environments=` (one instance per completion).

What this module does with that:
- `environment_class(url)` reads the server's tool catalog and builds a class
  with one method per tool, typed and documented from the tool's JSON Schema
  (TRL renders the method into the prompt's tool list).
- `reset(**row)` takes the row's `task` and `seed` (or only `seed`: seed s of
  a lane of N tasks plays task s mod N on seed s // N, as a reset with only a
  seed does on the server's OpenEnv socket) and closes the instance's
  previous episode. Each reset of a (task, seed) is the next rollout of its
  GRPO group (0, 1, ... counted by the class, in the order TRL resets), so
  with `keep_records=True` every rollout of a group is kept, each as its own
  record (`stats` then reports pass^k over the groups). The server's episode opens at the first tool call, so the
  lane's `wall_time_ms` does not count the time TRL spends generating the rest
  of the batch before it; it still counts the turns after it.
- Each tool call is one assistant turn of one call on the server; the method
  returns the text the agent would see (an error text for a wrong call: it is
  the agent's behaviour, recorded).
- `reward_function(completions, environments, **kwargs)` sends each
  completion's final text as the episode's final answer (TRL never gives it to
  the environment) and scores it with the hidden predicates: 1.0 when every one
  passed, else 0.0 (`reward_key="completed"` scores the stricter verdict).
  With `keep_records=True` each scored episode is also kept as a
  replay-verified record in the server's `--out`.

Limits (say so in your training setup): a rollout ends at the model's first
text turn, so a task with a user simulator gets only one user turn here (use
TRL's `rollout_func` or `EpisodeFactoryEnv` for those); the methods are fixed
when the class is built, so a lane whose faults rename tools mid-episode does
not fit (a renamed tool is answered as unknown); TRL renders only what Python
type hints can say of a schema (types, enums, required), not nested shapes or
bounds.

Standard library only, besides episode_factory_env.py next to it.
"""

import inspect
import json
import keyword
import typing
from typing import Any, Callable, Iterable, Optional

from episode_factory_env import EpisodeFactoryEnv, RolloutCounter, completion_turns, keep_record

_SCALARS = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}
# Names TRL does not offer as tools (grpo_trainer.py: reset, get_reward, and anything starting with "_").
_RESERVED = {"reset", "get_reward"}


def _annotation(schema: dict) -> Any:
    """A Python type hint for a JSON Schema, as far as hints go: enums become Literal, unions of types Union."""
    if not isinstance(schema, dict):
        return Any
    if isinstance(schema.get("enum"), list) and schema["enum"] and all(isinstance(value, (str, int, float, bool)) for value in schema["enum"]):
        return typing.Literal[tuple(schema["enum"])]
    kind = schema.get("type")
    if isinstance(kind, list):
        types = [_SCALARS[item] for item in kind if item in _SCALARS]
        nullable = "null" in kind
        if not types:
            return Any
        hint = types[0] if len(types) == 1 else typing.Union[tuple(types)]
        return typing.Optional[hint] if nullable else hint
    if kind == "array" and isinstance(schema.get("items"), dict) and schema["items"].get("type") in _SCALARS:
        return list[_SCALARS[schema["items"]["type"]]]
    return _SCALARS.get(kind, Any)


def _line(text: Any) -> str:
    return " ".join(str(text or "").split())


def _tool_method(tool: dict) -> Callable:
    """One method for one tool: typed parameters and a Google-style docstring from its schema, one call per invocation."""
    function = tool.get("function", tool)
    name = function["name"]
    schema = function.get("parameters") or function.get("input_schema") or {}
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations = {}
    argument_lines = []
    renamed = {}
    # Required parameters first: Python wants those without a default before those with one.
    for key in sorted(properties, key=lambda key: key not in required):
        spec = properties[key] if isinstance(properties[key], dict) else {}
        python_name = key if key.isidentifier() and not keyword.iskeyword(key) else f"{''.join(c if c.isalnum() else '_' for c in key)}_"
        renamed[python_name] = key
        hint = _annotation(spec)
        if key not in required:
            hint = typing.Optional[hint]
        annotations[python_name] = hint
        default = inspect.Parameter.empty if key in required else None
        parameters.append(inspect.Parameter(python_name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint))
        argument_lines.append(f"    {python_name}: {_line(spec.get('description')) or key}")
    annotations["return"] = str
    doc = _line(function.get("description")) or f"Calls the tool {name}."
    if argument_lines:
        doc += "\n\nArgs:\n" + "\n".join(argument_lines)
    doc += "\n\nReturns:\n    What the tool answered, as the agent sees it."

    def call(self, **kwargs):
        # Arguments the model left out are not sent; the names are the tool's own, whatever Python called them.
        arguments = {renamed.get(key, key): value for key, value in kwargs.items() if value is not None}
        return self._call(name, arguments)

    call.__name__ = name
    call.__qualname__ = name
    call.__doc__ = doc
    call.__annotations__ = annotations
    call.__signature__ = inspect.Signature(parameters, return_annotation=str)
    return call


def server_catalog(url: str, task: Optional[str] = None, timeout: float = 120.0) -> tuple:
    """(the lane's task ids, the catalog an episode of `task` on seed 0 starts with); the episode is closed again."""
    env = EpisodeFactoryEnv(url, timeout=timeout)
    try:
        task_ids = [entry["id"] for entry in env.tasks()["tasks"]]
        env.reset(task=task if task is not None else task_ids[0], seed=0)
        return task_ids, list(env.tools)
    finally:
        env.close()


def derived_episode(task_ids: list, task: Optional[str], seed: Optional[int]) -> tuple:
    """The (task, seed) a row names. Without a task, seed s plays task number s mod N on seed s // N, as a reset
    with only a seed does on the server's OpenEnv socket: counting seeds reaches every task."""
    seed = 0 if seed is None else int(seed)
    if task is not None:
        return task, seed
    return task_ids[seed % len(task_ids)], seed // len(task_ids)


def environment_class(url: str, agent: Any = "trl-grpo", timeout: float = 120.0, task: Optional[str] = None) -> type:
    """A class for `GRPOTrainer(environment_factory=...)`: TRL calls it with no arguments, once per rollout.

    `agent` names the records' policy actor (name it per run: a dataset keeps one record per task, seed, agent
    and rollout, and rollouts are counted from 0 again by a new class). The tools are the catalog of `task`
    (default: the lane's first) on seed 0.
    """
    task_ids, tools = server_catalog(url, task=task, timeout=timeout)
    # Shared by every instance TRL makes of the class.
    rollouts = RolloutCounter()

    class EpisodeFactoryEnvironment:
        """One rollout's episode on an `env serve` world."""

        def __init__(self):
            self._env = EpisodeFactoryEnv(url, timeout=timeout)
            self._task = None
            self._seed = None
            self._rollout = None
            self._opened = False

        def reset(self, **row) -> None:
            """Takes the dataset row's task and seed; the episode opens at the first tool call (or at scoring)."""
            if self._opened:
                self._env.close()
            self._task, self._seed = derived_episode(task_ids, row.get("task"), row.get("seed"))
            self._rollout = rollouts.next(self._task, self._seed)
            self._opened = False
            return None

        def _open(self) -> None:
            if not self._opened:
                self._env.reset(task=self._task, seed=self._seed, agent=agent, rollout=self._rollout)
                self._opened = True

        def _call(self, name: str, arguments: dict) -> str:
            self._open()
            if self._env.done:
                return f"The episode is over ({(self._env.last_reward or {}).get('outcome', 'done')}): no more tool calls."
            message = {"role": "assistant", "content": "", "tool_calls": [{"id": "trl", "type": "function", "function": {"name": name, "arguments": arguments}}]}
            observation, reward, terminated, truncated, info = self._env.step(message)
            replies = [entry["content"] for entry in info["new_messages"] if entry.get("role") == "tool"]
            return replies[0] if replies else "The episode ended before the call was made."

        def _finish(self, answer: str) -> dict:
            """Sends the final answer (when the episode is not over yet) and returns the reward details."""
            self._open()
            if not self._env.done:
                self._env.step({"role": "assistant", "content": answer})
            return self._env.last_reward or {}

        def _record(self) -> Optional[str]:
            return keep_record(self._env)

    for tool in tools:
        name = tool.get("function", tool)["name"]
        if name in _RESERVED or name.startswith("_") or not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(
                f'the server\'s tool "{name}" cannot be a method TRL offers as a tool (TRL skips reset, get_reward and names '
                "starting with _, and a method name must be a Python identifier); drive this lane with EpisodeFactoryEnv instead"
            )
        setattr(EpisodeFactoryEnvironment, name, _tool_method(tool))
    return EpisodeFactoryEnvironment


def make_environment_reward(reward_key: str = "reward", keep_records: bool = False) -> Callable:
    """A reward function for GRPOTrainer with an environment_factory: the final answer, judged by the hidden checks.

    `reward_key` is "reward" (1.0 when every hidden predicate passed) or "completed" (that, a final answer, and no
    unsupported claim). With keep_records=True each scored episode becomes a replay-verified record in the server's --out.
    """
    if reward_key not in ("reward", "completed"):
        raise ValueError('reward_key must be "reward" or "completed"')

    def reward_function(completions, environments=None, **kwargs) -> list:
        if environments is None:
            raise ValueError("this reward function scores environments: pass environment_factory= to GRPOTrainer")
        scores = []
        for completion, environment in zip(completions, environments):
            turns = completion_turns(completion)
            texts = [turn.get("content") or "" for turn in turns if not turn.get("tool_calls")]
            details = environment._finish(texts[-1] if texts else "")
            value = details.get(reward_key)
            scores.append(float(value) if isinstance(value, (int, float, bool)) else 0.0)
            if keep_records:
                environment._record()
        return scores

    reward_function.__name__ = f"episode_factory_{reward_key}"
    return reward_function


reward_function = make_environment_reward()
