"""Calls a NeMo Gym resources server the way NeMo Gym's rollout collection and simple_agent do, and reports.

A stub of NeMo Gym's calling convention (NeMo Gym does not install on this machine), written from
github.com/NVIDIA-NeMo/Gym at commit 07d6b0d07b22fcf530b4c211dae2ee23100428e4 (nemo_gym 0.5.1):
- nemo_gym/rollout_collection.py: each row gets agent_ref, _ng_task_index (identical rows share one) and
  _ng_rollout_index (counted per task index), and the rows' /run calls go out concurrently;
- responses_api_agents/simple_agent/app.py (SimpleAgent.run, _create_episode):
  POST /seed_session with the whole row, no cookies; then per model turn, each function_call's arguments parsed with
  json.loads (unparseable ones answered by the agent itself, {"error": "Invalid tool call arguments: <repr>"}, never
  sent), POST /<name> with the parsed arguments and the cookies of the previous resources-server answer only, the
  answer's bytes decoded as the tool output whatever its status; the loop ends at a turn with an assistant message and
  no function call; POST /verify with row | {"response": <the response, output = every item of the episode>} and the
  last answer's cookies; raise_for_status on /seed_session and /verify only;
- nemo_gym/server_utils.py: the aiohttp client has a DummyCookieJar (nothing is kept between calls but what the agent
  passes on) and posts JSON;
- at the end, POST /aggregate_metrics {verify_responses}.

    python nemo_gym_stub_client.py RESOURCES_URL script.json

script.json: {"rows": [{"row": <NeMo Gym dataset row>, "turns": [{"calls": [[name, arguments]], "text": "..."}]}]};
arguments given as a string are sent as the model wrote them (possibly not JSON), an object as its JSON.
"""

import json
import sys
import threading
import time
import urllib.error
import urllib.request
from copy import deepcopy
from http.cookies import SimpleCookie


def post(base, path, body, cookies):
    """One aiohttp-like POST: (status, text, the cookies this answer set)."""
    headers = {"Content-Type": "application/json"}
    if cookies:
        headers["Cookie"] = "; ".join(f"{key}={value}" for key, value in cookies.items())
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            status, text, header_list = response.status, response.read().decode(), response.headers.get_all("Set-Cookie") or []
    except urllib.error.HTTPError as error:
        status, text, header_list = error.code, error.read().decode(), error.headers.get_all("Set-Cookie") or []
    jar = SimpleCookie()
    for header in header_list:
        jar.load(header)
    return status, text, {key: morsel.value for key, morsel in jar.items()}


def model_outputs(turn, index):
    """A scripted policy turn as Responses API output items, as a model server returns them."""
    output = []
    for position, (name, arguments) in enumerate(turn.get("calls", [])):
        output.append({"type": "function_call", "id": f"fc_{index}_{position}", "call_id": f"call_{index}_{position}", "name": name,
                       "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments), "status": "completed"})
    if "text" in turn or not output:
        output.append({"type": "message", "id": f"msg_{index}", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": turn.get("text", ""), "annotations": []}]})
    return output


def run(base, row, turns):
    """SimpleAgent.run for one row."""
    status, text, cookies = post(base, "/seed_session", row, None)
    if status >= 400:
        raise RuntimeError(f"/seed_session answered {status}: {text}")
    report = {"seed_cookies": cookies, "calls": []}
    resources_server_cookies = cookies
    new_outputs = []
    for index in range(len(turns) + 1):
        output = model_outputs(turns[index] if index < len(turns) else {"text": ""}, index)
        new_outputs.extend(output)
        calls = [item for item in output if item["type"] == "function_call"]
        if not calls and any(item["type"] == "message" and item["role"] == "assistant" for item in output):
            break
        for call in calls:
            entry = {"name": call["name"], "cookies": resources_server_cookies}
            try:
                arguments = json.loads(call["arguments"])
            except (json.JSONDecodeError, TypeError) as error:
                tool_output = json.dumps({"error": f"Invalid tool call arguments: {error!r}"})
                entry.update(sent=False, tool_status="failed", error_type=type(error).__name__)
            else:
                status, tool_output, resources_server_cookies = post(base, f"/{call['name']}", arguments, resources_server_cookies)
                completed = 200 <= status < 400
                entry.update(sent=True, status=status, tool_status="completed" if completed else "failed", error_type=None if completed else f"http_{status}")
            entry["output"] = tool_output
            report["calls"].append(entry)
            new_outputs.append({"type": "function_call_output", "call_id": call["call_id"], "output": tool_output})
    response = {"id": f"resp_{row['_ng_task_index']}_{row['_ng_rollout_index']}", "object": "response", "created_at": time.time(),
                "model": "scripted-policy", "output": new_outputs, "parallel_tool_calls": True, "tool_choice": "auto",
                "tools": row["responses_create_params"].get("tools", [])}
    status, text, _ = post(base, "/verify", dict(row, response=response), resources_server_cookies)
    if status >= 400:
        raise RuntimeError(f"/verify answered {status}: {text}")
    report["verify_cookies"] = resources_server_cookies
    report["verify"] = json.loads(text)
    return report


def main(base, script_path):
    with open(script_path, encoding="utf-8") as handle:
        script = json.load(handle)
    rows, task_index, rollouts = [], {}, {}
    for play in script["rows"]:
        row = deepcopy(play["row"])
        row.setdefault("agent_ref", {"name": "simple_agent"})
        key = json.dumps(play["row"], sort_keys=True)
        row["_ng_task_index"] = task_index.setdefault(key, len(task_index))
        row["_ng_rollout_index"] = rollouts.get(row["_ng_task_index"], 0)
        rollouts[row["_ng_task_index"]] = row["_ng_rollout_index"] + 1
        rows.append((row, play["turns"]))
    reports = [None] * len(rows)

    def one(index):
        try:
            reports[index] = run(base, *rows[index])
        except Exception as error:  # reported, so the test shows which row failed
            reports[index] = {"error": repr(error)}

    threads = [threading.Thread(target=one, args=(index,)) for index in range(len(rows))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stripped = [{"_ng_task_index": r["verify"]["_ng_task_index"], "reward": r["verify"]["reward"]} for r in reports if "verify" in r]
    status, text, _ = post(base, "/aggregate_metrics", {"verify_responses": stripped}, None)
    print(json.dumps({"rollouts": reports, "aggregate_metrics": {"status": status, "body": json.loads(text)}}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
