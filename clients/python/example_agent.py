#!/usr/bin/env python3
"""A worked example: a random agent driven through `episode-factory env serve`.

Each episode it calls a few tools chosen at random, with arguments drawn from each tool's JSON Schema, then answers.
It prints each episode's reward (1 when every hidden predicate passed) and keeps each finished episode as a record,
which the server replay-verifies on a fresh world first (and appends to its --out, when it has one). With --out DIR
the example also writes the records it got back to DIR/episodes.jsonl, which `episode-factory replay DIR` verifies.

    episode-factory env serve tool-world-v1 --port 8940 &
    python3 clients/python/example_agent.py --url http://127.0.0.1:8940 --episodes 5

Standard library only. A random agent rarely earns a reward; replace `act` with your model.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from episode_factory_env import EnvError, EpisodeFactoryEnv  # noqa: E402

WORDS = ["login", "dashboard", "export", "timeout", "crash", "docs", "release", "cache", "alice", "bob"]


def draw(schema: dict, rng: random.Random, depth: int = 0):
    """A value that usually fits `schema`: enums, consts, numbers within bounds, strings, arrays and objects with their
    required properties (and now and then an optional one)."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema and schema[key]:
            return draw(rng.choice(schema[key]), rng, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice([k for k in kind if k != "null"] or kind)
    if kind == "integer":
        low = int(schema.get("minimum", 1))
        return rng.randint(low, int(schema.get("maximum", low + 20)))
    if kind == "number":
        low = float(schema.get("minimum", 0))
        return round(rng.uniform(low, float(schema.get("maximum", low + 100))), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        if depth > 3:
            return []
        return [draw(schema.get("items", {}), rng, depth + 1) for _ in range(rng.randint(max(1, int(schema.get("minItems", 1))), 2))]
    if kind == "object" or "properties" in schema:
        if depth > 3:
            return {}
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        return {name: draw(sub, rng, depth + 1) for name, sub in properties.items() if name in required or rng.random() < 0.3}
    if kind == "string" or kind is None:
        if schema.get("format") == "date":
            return f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
        if "pattern" in schema and schema["pattern"].startswith("^/"):
            return "/sandbox/" + rng.choice(WORDS) + ".txt"
        return rng.choice(WORDS)
    return None


def act(observation: dict, calls_left: int, rng: random.Random) -> dict:
    """The agent: a random tool call while it has calls left, then an answer."""
    tools = observation["tools"]
    if calls_left > 0 and tools:
        tool = rng.choice(tools)["function"]
        arguments = draw(tool.get("parameters", {}), rng)
        return {"role": "assistant", "content": "", "tool_calls": [{"id": f"r{rng.randint(0, 10**6)}", "type": "function", "function": {"name": tool["name"], "arguments": json.dumps(arguments)}}]}
    return {"role": "assistant", "content": "I looked into it and I am done."}


def main() -> int:
    parser = argparse.ArgumentParser(description="Run a random agent through episode-factory env serve.")
    parser.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8940")
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--task", help="only this task (default: every task of the lane in turn)")
    parser.add_argument("--seed", type=int, help="the first seed (default: the lane's first); each pass over the tasks takes the next")
    parser.add_argument("--calls", type=int, default=2, help="random tool calls per episode before answering")
    parser.add_argument("--agent", default="random-agent", help="the name records give the policy")
    parser.add_argument("--rng-seed", type=int, default=0, help="seeds the agent's own choices")
    parser.add_argument("--out", help="also write the records the server returns to OUT/episodes.jsonl")
    parser.add_argument("--no-record", action="store_true", help="do not keep episodes as records")
    args = parser.parse_args()

    env = EpisodeFactoryEnv(args.url)
    lane = env.tasks()
    tasks = [args.task] if args.task else [task["id"] for task in lane["tasks"]]
    first_seed = args.seed if args.seed is not None else lane["seed_range"]["from"]
    rng = random.Random(args.rng_seed)
    out_file = None
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        out_file = open(os.path.join(args.out, "episodes.jsonl"), "a", encoding="utf-8")
    print(f"lane {lane['lane']}: {len(lane['tasks'])} tasks; {args.episodes} episodes of a random agent")
    rewards = []
    for index in range(args.episodes):
        task = tasks[index % len(tasks)]
        seed = first_seed + index // len(tasks)
        observation, info = env.reset(task=task, seed=seed, agent=args.agent)
        calls_left = args.calls
        details = None
        steps = 0
        while not env.done:
            message = act(observation, calls_left, rng)
            calls_left -= 1
            observation, reward, terminated, truncated, info = env.step(message)
            steps += 1
            details = info["reward_details"] or details
        rewards.append(details["reward"])
        print(f"episode {index + 1}: task {task} seed {seed}: reward {details['reward']} ({details['passed']}/{details['total']} predicates), outcome {details['outcome']}, {steps} steps")
        for predicate in details["predicates"]:
            print(f"  {'pass' if predicate['passed'] else 'FAIL'} {predicate['id']}{': ' + predicate['detail'] if predicate.get('detail') else ''}")
        if not args.no_record:
            try:
                kept = env.record()
                where = f", written to {kept['out']}" if kept.get("written") and kept.get("out") else ""
                print(f"  record {kept['record_id']} verified by replay{where}")
                if out_file:
                    out_file.write(kept["line"] + "\n")
                    out_file.flush()
            except EnvError as error:
                print(f"  record not kept: {error}")
        env.close()
    if out_file:
        out_file.close()
    mean = sum(rewards) / len(rewards) if rewards else 0.0
    print(f"mean reward {mean:.2f} over {len(rewards)} episodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
