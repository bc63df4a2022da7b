"""Drives `env serve`'s /ws as OpenEnv's own client does, and reports what came back.

Written from OpenEnv's protocol (openenv-core 0.2.3, src/openenv/core/env_client.py):
the real `websockets` library, ws:// URL derived from http:// plus /ws, a
100 MiB max frame size, JSON text frames {"type", "data"}, one reply per frame.
The test (tests/environment/openenv.test.ts) gives a script of operations and
asserts on the report:

    python openenv_socket_session.py http://127.0.0.1:PORT script.json

A script is {"ping_interval": seconds or null, "ops": [...]}; an operation is
  {"send": frame}                 send a frame and record the reply
  {"send": frame, "reply": false} send a frame, expect no reply
  {"send_text": "..."}            send raw text and record the reply
  {"send_binary": "..."}          send a binary frame and record the reply
  {"recv": true}                  record the next frame (one the server sent unasked)
  {"sleep": seconds}              wait (a slow model's turn)
  {"http": [method, path, body]}  a native HTTP request; "{episode_id}" in the path is
                                  the episode the last reset opened, "{previous_episode_id}"
                                  the one before it
  {"session": script}             run another socket while this one stays open
The report is {"replies": [...], "http": [...], "closed": {code, reason} | null, "sessions": [...]}.
"""

import asyncio
import json
import sys
import urllib.error
import urllib.request

import websockets


def socket_url(base):
    base = base.rstrip("/")
    if base.startswith("https://"):
        return "wss://" + base[len("https://"):] + "/ws"
    if base.startswith("http://"):
        return "ws://" + base[len("http://"):] + "/ws"
    return "ws://" + base + "/ws"


def http(base, method, path, body):
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(base.rstrip("/") + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return {"status": response.status, "body": json.loads(response.read().decode("utf-8"))}
    except urllib.error.HTTPError as error:
        return {"status": error.code, "body": json.loads(error.read().decode("utf-8"))}


async def run(base, script):
    report = {"replies": [], "http": [], "closed": None, "sessions": []}
    episode_id = None
    previous_episode_id = None
    async with websockets.connect(socket_url(base), max_size=100 * 1024 * 1024, open_timeout=10, ping_interval=script.get("ping_interval", 20), ping_timeout=script.get("ping_timeout", 20)) as ws:

        async def receive():
            nonlocal episode_id, previous_episode_id
            try:
                frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=60))
            except websockets.ConnectionClosed as closed:
                report["closed"] = {"code": closed.rcvd.code if closed.rcvd else None, "reason": closed.rcvd.reason if closed.rcvd else None}
                return None
            observation = frame.get("data", {}).get("observation") if isinstance(frame.get("data"), dict) else None
            if frame.get("type") == "observation" and isinstance(observation, dict) and "episode_id" in observation:
                previous_episode_id, episode_id = episode_id, observation["episode_id"]
            report["replies"].append(frame)
            return frame

        for op in script["ops"]:
            if report["closed"] is not None:
                break
            if "send" in op:
                await ws.send(json.dumps(op["send"]))
                if op.get("reply", True):
                    await receive()
            elif "send_text" in op:
                await ws.send(op["send_text"])
                await receive()
            elif "send_binary" in op:
                await ws.send(op["send_binary"].encode("utf-8"))
                await receive()
            elif "recv" in op:
                await receive()
            elif "sleep" in op:
                await asyncio.sleep(op["sleep"])
            elif "http" in op:
                method, path, body = op["http"]
                report["http"].append(http(base, method, path.replace("{previous_episode_id}", previous_episode_id or "none").replace("{episode_id}", episode_id or "none"), body))
            elif "session" in op:
                report["sessions"].append(await run(base, op["session"]))
        if report["closed"] is None and script.get("await_close"):
            try:
                await asyncio.wait_for(ws.recv(), timeout=10)
            except websockets.ConnectionClosed as closed:
                report["closed"] = {"code": closed.rcvd.code if closed.rcvd else None, "reason": closed.rcvd.reason if closed.rcvd else None}
    return report


if __name__ == "__main__":
    with open(sys.argv[2], encoding="utf-8") as handle:
        script = json.load(handle)
    print(json.dumps(asyncio.run(run(sys.argv[1], script))))
