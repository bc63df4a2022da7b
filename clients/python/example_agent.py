#!/usr/bin/env python3
"""A worked example: a random agent, or a model on an OpenAI-compatible server, driven through `episode-factory env serve`.

Each episode the random agent calls a few tools chosen at random, with arguments drawn from each tool's JSON Schema,
then answers. With --model (and --base-url) a model served by vLLM, SGLang, llama.cpp's server or Ollama's /v1 plays
instead: each turn, the conversation and the tools go to its /chat/completions as they are, and the assistant message
it returns goes to /step as it is.
It prints each episode's reward (1 when every hidden predicate passed) and keeps each finished episode as a record,
which the server replay-verifies on a fresh world first (and appends to its --out, when it has one). With --out DIR
the example also writes the records it got back to DIR/episodes.jsonl, which `episode-factory replay DIR` verifies.

    episode-factory env serve tool-world-v1 --port 8940 &
    python3 clients/python/example_agent.py --url http://127.0.0.1:8940 --episodes 5
    python3 clients/python/example_agent.py --url http://127.0.0.1:8940 --episodes 5 \
        --model Qwen/Qwen2.5-1.5B-Instruct --base-url http://127.0.0.1:8000/v1

Standard library only. A random agent rarely earns a reward; replace `act` with your model.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import urllib.request

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


def model_turn(base_url: str, model: str, api_key: str | None, observation: dict, seed: int, temperature: float) -> dict:
    """One chat completion on an OpenAI-compatible server: the episode's conversation and tools as they are."""
    body = {"model": model, "messages": observation["messages"], "tools": observation["tools"], "tool_choice": "auto", "seed": seed, "temperature": temperature, "max_tokens": 512, "stream": False}
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(base_url.rstrip("/") + "/chat/completions", data=json.dumps(body).encode("utf-8"), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=120) as response:
        answer = json.load(response)
    return answer["choices"][0]["message"]


def main() -> int:
    parser = argparse.ArgumentParser(description="Run a random agent, or a model on an OpenAI-compatible server, through episode-factory env serve.")
    parser.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8940")
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--task", help="only this task (default: every task of the lane in turn)")
    parser.add_argument("--seed", type=int, help="the first seed (default: the lane's first); each pass over the tasks takes the next")
    parser.add_argument("--calls", type=int, default=2, help="random tool calls per episode before answering")
    parser.add_argument("--agent", default="random-agent", help="the name records give the policy")
    parser.add_argument("--rng-seed", type=int, default=0, help="seeds the agent's own choices")
    parser.add_argument("--out", help="also write the records the server returns to OUT/episodes.jsonl")
    parser.add_argument("--no-record", action="store_true", help="do not keep episodes as records")
    parser.add_argument("--model", help="a model served through an OpenAI-compatible API plays instead of the random agent")
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"), help="with --model: the API root (default: OPENAI_BASE_URL, else http://127.0.0.1:8000/v1)")
    parser.add_argument("--api-key-env", help="with --model: the environment variable holding the API key")
    parser.add_argument("--temperature", type=float, default=0.2, help="with --model: its sampling temperature")
    args = parser.parse_args()
    api_key = os.environ.get(args.api_key_env) if args.api_key_env else None
    if args.api_key_env and not api_key:
        parser.error(f"--api-key-env {args.api_key_env}: the variable is not set")
    # An agent name is letters, digits, ".", "_" and "-": a served id like Qwen/Qwen2.5-1.5B-Instruct becomes Qwen-Qwen2.5-1.5B-Instruct.
    agent = args.agent if args.agent != "random-agent" or not args.model else re.sub(r"[^A-Za-z0-9._-]", "-", args.model)[:64]

    env = EpisodeFactoryEnv(args.url)
    lane = env.tasks()
    tasks = [args.task] if args.task else [task["id"] for task in lane["tasks"]]
    first_seed = args.seed if args.seed is not None else lane["seed_range"]["from"]
    rng = random.Random(args.rng_seed)
    out_file = None
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        out_file = open(os.path.join(args.out, "episodes.jsonl"), "a", encoding="utf-8")
    print(f"lane {lane['lane']}: {len(lane['tasks'])} tasks; {args.episodes} episodes of {'model ' + args.model if args.model else 'a random agent'}")
    rewards = []
    for index in range(args.episodes):
        task = tasks[index % len(tasks)]
        seed = first_seed + index // len(tasks)
        observation, info = env.reset(task=task, seed=seed, agent=agent)
        calls_left = args.calls
        details = env.last_reward if env.done else None
        steps = 0
        while not env.done:
            if args.model:
                message = model_turn(args.base_url, args.model, api_key, observation, seed=rng.randint(0, 2**31 - 1), temperature=args.temperature)
            else:
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
