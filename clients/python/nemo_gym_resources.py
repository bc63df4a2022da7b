"""A NeMo Gym resources server over a running `episode-factory env serve`, standard library only.

    npx episode-factory env serve tool-world-v1 --port 8940 --out datasets/nemo &
    python3 clients/python/nemo_gym_resources.py --env-url http://127.0.0.1:8940 --dataset rows.jsonl --seeds 0,1
    python3 clients/python/nemo_gym_resources.py --env-url http://127.0.0.1:8940 --port 8950 --keep-records
    # prints http://127.0.0.1:8950; point a NeMo Gym agent's resources_server at it

Written from NeMo Gym 0.5.1 (github.com/NVIDIA-NeMo/Gym, commit 07d6b0d07b22fcf530b4c211dae2ee23100428e4):
nemo_gym/base_resources_server.py (SimpleResourcesServer: POST /seed_session, POST /verify, POST /aggregate_metrics,
GET /reverify_mode, and the tool routes a subclass adds as POST /<tool name>), nemo_gym/server_utils.py (the session:
a Starlette session cookie named <Class>___<server name>, set again on every answer), and
responses_api_agents/simple_agent/app.py (how the agent calls them). NeMo Gym itself does not install on the machine
this was written on; tests/python/nemo_gym_stub_client.py plays simple_agent's calls against this module.

How simple_agent calls a resources server, and what this server does with each call:
- POST /seed_session with the whole dataset row: opens an episode of the row's `task` and `seed` (`agent` and
  `rollout` too when the row has them; otherwise the rollout is NeMo Gym's `_ng_rollout_index`, so `num_repeats`
  rollouts of a row are one GRPO group, each kept as its own record). It answers {} and sets the session cookie,
  whose value is the episode id.
- POST /<tool> with the call's parsed arguments and the cookie of the previous answer: one assistant turn of one call
  on the episode. The body is the tool's text, exactly what the agent would see. A call the runner rejected answers
  in FastAPI's shape, as a route of NeMo Gym would: an unknown tool 404 {"detail": text}, arguments that do not fit
  the schema 422 {"detail": [{type, loc, msg, input}]}. simple_agent gives that body to the model as the tool's
  output, and the episode records the call as the agent's behaviour.
- POST /verify with the row and `response` (the policy's Responses API output): the text of its last assistant
  message is sent as the final answer. The answer is the request body plus `reward` (1.0 when every hidden predicate
  passed, else 0.0) and `episode_factory` (the verdicts, the outcome, and with --keep-records the id of the
  replay-verified record kept in the server's --out). The episode is then closed.

Limits: each call is its own turn, so a model turn of parallel calls is recorded as consecutive turns, and text the
model writes beside its calls is not sent (simple_agent does not pass it on); simple_agent ends at the first text
turn, so a task with a user simulator gets no second user turn (verify then answers reward 0.0, outcome
"awaiting_user", and keeps nothing); arguments simple_agent cannot parse as JSON never reach this server (it answers
them itself), so the record does not hold them; a session seeded and never verified holds its episode until
`env serve`'s --idle-timeout closes it.
"""

import argparse
import json
import threading
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import urlsplit

from episode_factory_env import EnvError, EpisodeFactoryEnv, keep_record

# Starlette's session cookie as NeMo Gym names it: <server class>___<server name>.
COOKIE = "EpisodeFactoryResourcesServer___episode_factory"


def final_text(response: Any) -> str:
    """The text of the last assistant message of a NeMo Gym response's output: the policy's answer."""
    for item in reversed((response or {}).get("output") or []):
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role", "assistant") == "assistant":
            content = item.get("content")
            if isinstance(content, str):
                return content
            return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict) and part.get("type") in ("output_text", "text"))
    return ""


def _rejection(text: str, arguments: Any) -> Optional[tuple]:
    """(status, FastAPI-shaped body) for a call the runner rejected before the tool ran, else None."""
    try:
        result = json.loads(text)
    except ValueError:
        return None
    if not isinstance(result, dict) or result.get("ok") is not False:
        return None
    if result.get("kind") == "unknown_tool":
        return 404, {"detail": result.get("error", "Not Found")}
    if result.get("kind") in ("invalid_arguments", "malformed_tool_call"):
        errors = result.get("errors") or [{"path": "(root)", "reason": result.get("error", "invalid arguments")}]
        return 422, {"detail": [
            {"type": "value_error", "loc": ["body"] + ([] if e.get("path") == "(root)" else str(e.get("path")).split(".")), "msg": e.get("reason"), "input": arguments}
            for e in errors]}
    return None


class EpisodeFactoryResources:
    """The routes of a NeMo Gym resources server, one env serve episode per session."""

    def __init__(self, env_url: str, agent: Any = "nemo-gym", keep_records: bool = False, timeout: float = 120.0):
        self.env_url, self.agent, self.keep_records, self.timeout = env_url, agent, keep_records, timeout
        self.sessions: dict = {}
        self.lock = threading.Lock()

    def handle(self, route: str, body: Any, session: Optional[str]) -> tuple:
        """(status, body: a JSON value or the tool's raw text, session cookie to set or None)."""
        if not route or "/" in route:
            return 404, {"detail": "Not Found"}, None
        try:
            if route == "seed_session":
                return self.seed_session(body, session)
            if route == "verify":
                return self.verify(body, session)
            if route == "aggregate_metrics":
                rewards = [float(item.get("reward", 0.0)) for item in body.get("verify_responses", [])]
                mean = sum(rewards) / len(rewards) if rewards else 0.0
                return 200, {"group_level_metrics": [], "agent_metrics": {"mean/reward": mean, "num_rollouts": len(rewards)}, "key_metrics": {"mean/reward": mean}}, None
            return self.tool(route, body, session)
        except EnvError as error:
            # FastAPI's error shape, with the server's own code beside it; 400s are the request's fault, as 422 is there.
            return (422 if error.status == 400 else error.status), {"detail": str(error), "code": error.code}, session

    def seed_session(self, body: dict, session: Optional[str]) -> tuple:
        self._close(session)
        env = EpisodeFactoryEnv(self.env_url, timeout=self.timeout)
        rollout = body.get("rollout", body.get("_ng_rollout_index"))
        env.reset(task=body.get("task"), seed=body.get("seed"), agent=body.get("agent", self.agent), rollout=rollout)
        with self.lock:
            self.sessions[env.episode_id] = (env, threading.Lock())
        return 200, {}, env.episode_id

    def tool(self, name: str, arguments: Any, session: Optional[str]) -> tuple:
        entry = self.sessions.get(session or "")
        if entry is None:
            return 400, {"detail": "no episode for this session: POST /seed_session first, and send the cookie it set"}, None
        env, busy = entry
        with busy:
            if env.done:
                return 409, {"detail": f"the episode is over ({(env.last_reward or {}).get('outcome', 'done')}): no more tool calls"}, session
            call = {"id": "nemo", "type": "function", "function": {"name": name, "arguments": arguments}}
            _obs, _reward, _terminated, _truncated, info = env.step({"role": "assistant", "content": "", "tool_calls": [call]})
        replies = [message.get("content") for message in info["new_messages"] if message.get("role") == "tool"]
        if not replies:
            return 409, {"detail": f"the episode ended before the call was made ({info.get('outcome')})"}, session
        text = replies[0] if isinstance(replies[0], str) else json.dumps(replies[0])
        rejected = _rejection(text, arguments)
        return (rejected[0], rejected[1], session) if rejected else (200, text, session)

    def verify(self, body: dict, session: Optional[str]) -> tuple:
        with self.lock:
            entry = self.sessions.pop(session or "", None)
        if entry is None:
            return 400, {"detail": "no episode for this session: POST /seed_session first, and send the cookie it set"}, None
        env, busy = entry
        with busy:
            try:
                if not env.done:
                    env.step({"role": "assistant", "content": final_text(body.get("response"))})
                details = dict(env.last_reward or {}) if env.done else {"outcome": "awaiting_user"}
                details["episode_id"] = env.episode_id
                if self.keep_records and env.done:
                    details["record_id"] = keep_record(env)
            finally:
                env.close()
        reward = float(details.get("reward", 0.0)) if env.done else 0.0
        return 200, dict(body, reward=reward, episode_factory=details), None

    def _close(self, session: Optional[str]) -> None:
        with self.lock:
            entry = self.sessions.pop(session or "", None)
        if entry is not None:
            entry[0].close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # simple_agent's aiohttp client keeps connections alive

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        cookie = SimpleCookie(self.headers.get("Cookie") or "")
        session = cookie[COOKIE].value if COOKIE in cookie else None
        try:
            body = json.loads(raw or b"{}")
        except ValueError as error:
            return self._send(422, {"detail": [{"type": "json_invalid", "loc": ["body"], "msg": str(error)}]}, session)
        try:
            status, answer, session = self.server.resources.handle(urlsplit(self.path).path.strip("/"), body, session)
        except Exception as error:  # as NeMo Gym's exception middleware answers: 500, repr(e) as a JSON string
            return self._send(500, repr(error), session, raw=False)
        self._send(status, answer, session)

    def do_GET(self) -> None:
        if urlsplit(self.path).path == "/reverify_mode":
            return self._send(200, "unsupported", None, raw=False)
        self._send(404, {"detail": "Not Found"}, None)

    def _send(self, status: int, answer: Any, session: Optional[str], raw: bool = True) -> None:
        # A tool's text goes out as it is (what simple_agent hands the model); everything else is JSON.
        text = answer if raw and isinstance(answer, str) else json.dumps(answer)
        data = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if _is_json(text) else "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if session:
            # Set on every answer, as NeMo Gym's session middleware does: simple_agent sends only the last answer's cookies.
            self.send_header("Set-Cookie", f"{COOKIE}={session}; Path=/; HttpOnly; SameSite=Lax")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


def serve(env_url: str, host: str = "127.0.0.1", port: int = 0, **options) -> ThreadingHTTPServer:
    """A started-but-not-serving HTTP server; call serve_forever() on it (its URL: server.url)."""
    server = ThreadingHTTPServer((host, port), _Handler)
    server.daemon_threads = True
    server.resources = EpisodeFactoryResources(env_url, **options)
    server.url = f"http://{host}:{server.server_address[1]}"
    return server


def dataset_rows(env_url: str, seeds, tasks=None) -> list:
    """NeMo Gym dataset rows, {responses_create_params: {input, tools}, task, seed}, read from the server's openings."""
    env = EpisodeFactoryEnv(env_url)
    rows = []
    for task in tasks or [entry["id"] for entry in env.tasks()["tasks"]]:
        for seed in seeds:
            observation, _info = env.reset(task=task, seed=seed)
            tools = [dict(type="function", name=t["function"]["name"], description=t["function"].get("description", ""),
                          parameters=t["function"].get("parameters", {}), strict=False) for t in observation["tools"]]
            rows.append({"responses_create_params": {"input": observation["messages"], "tools": tools}, "task": task, "seed": seed})
            env.close()
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="A NeMo Gym resources server over episode-factory env serve.")
    parser.add_argument("--env-url", required=True, help="the env serve URL, e.g. http://127.0.0.1:8940")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port (the URL is printed)")
    parser.add_argument("--agent", default="nemo-gym", help="the records' policy name when a row names none")
    parser.add_argument("--keep-records", action="store_true", help="keep each verified episode in the server's --out")
    parser.add_argument("--dataset", help="write NeMo Gym rows for --seeds (and --tasks) to this JSONL file and exit")
    parser.add_argument("--seeds", default="0", help="comma-separated seeds for --dataset")
    parser.add_argument("--tasks", help="comma-separated task ids for --dataset (default: every task)")
    args = parser.parse_args(argv)
    if args.dataset:
        rows = dataset_rows(args.env_url, [int(seed) for seed in args.seeds.split(",")], args.tasks.split(",") if args.tasks else None)
        with open(args.dataset, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row) + "\n" for row in rows)
        print(f"{len(rows)} rows in {args.dataset}")
        return
    server = serve(args.env_url, args.host, args.port, agent=args.agent, keep_records=args.keep_records)
    print(server.url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        for env, _busy in list(server.resources.sessions.values()):
            env.close()


if __name__ == "__main__":
    main()
