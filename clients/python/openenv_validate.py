#!/usr/bin/env python3
"""Checks a running environment server the way `openenv validate --url` does.

OpenEnv's own command (openenv-core, src/openenv/cli/_validation.py) cannot be
installed everywhere; this script makes the same six checks with the standard
library only and prints the same kind of report:

    python3 clients/python/openenv_validate.py http://127.0.0.1:8940

1. GET /openapi.json answers 200 with a string info.version;
2. GET /health answers 200 with {"status": "healthy"};
3. GET /metadata answers 200 with a string name and description;
4. GET /schema answers 200 with action, observation and state objects;
5. POST /mcp with {} answers 200 with a JSON-RPC 2.0 object;
6. the OpenAPI paths list /reset, /step and /state together (simulation
   mode) or none of them (production mode).

Exit status 0 when every check passes, 1 otherwise.
"""

import json
import sys
import urllib.error
import urllib.request


def fetch(url, method="GET", body=None, timeout=5.0):
    """(status, parsed JSON or None, error text or None)."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, text = response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode("utf-8", "replace")
    except Exception as error:  # connection refused, timeout: the check fails, naming it
        return None, None, f"Request failed: {type(error).__name__}: {error}"
    try:
        return status, json.loads(text), None
    except ValueError:
        return status, None, None


def validate(base, timeout=5.0):
    base = base.strip()
    if "://" not in base:
        base = "http://" + base
    base = base.rstrip("/")
    criteria = []

    def check(identifier, description, passed, details=None):
        entry = {"id": identifier, "description": description, "passed": bool(passed), "required": True}
        if details and not passed:
            entry["details"] = details
        criteria.append(entry)

    status, body, error = fetch(base + "/openapi.json", timeout=timeout)
    info = body.get("info") if isinstance(body, dict) else None
    version = info.get("version") if isinstance(info, dict) else None
    check("openapi_version_available", "GET /openapi.json exposes info.version", status == 200 and isinstance(version, str), error or f"status {status}, info.version {version!r}")
    paths = body.get("paths") if isinstance(body, dict) else None

    status, body, error = fetch(base + "/health", timeout=timeout)
    check("health_endpoint", "GET /health answers status healthy", status == 200 and isinstance(body, dict) and body.get("status") == "healthy", error or f"status {status}, body {body!r}")

    status, body, error = fetch(base + "/metadata", timeout=timeout)
    ok = status == 200 and isinstance(body, dict) and isinstance(body.get("name"), str) and isinstance(body.get("description"), str)
    check("metadata_endpoint", "GET /metadata gives a name and a description", ok, error or f"status {status}, body {body!r}")

    status, body, error = fetch(base + "/schema", timeout=timeout)
    ok = status == 200 and isinstance(body, dict) and all(isinstance(body.get(key), dict) for key in ("action", "observation", "state"))
    check("schema_endpoint", "GET /schema gives action, observation and state schemas", ok, error or f"status {status}")

    status, body, error = fetch(base + "/mcp", method="POST", body={}, timeout=timeout)
    check("mcp_endpoint", "POST /mcp answers JSON-RPC 2.0", status == 200 and isinstance(body, dict) and body.get("jsonrpc") == "2.0", error or f"status {status}, body {body!r}")

    mode = "unknown"
    if not isinstance(paths, dict) or not paths:
        check("mode_endpoint_consistency", "the OpenAPI paths fit one mode", False, "no paths in /openapi.json")
    elif "/reset" in paths:
        mode = "simulation"
        check("mode_endpoint_consistency", "simulation mode: /reset, /step and /state are all served", "/step" in paths and "/state" in paths, "/reset is listed without /step or /state")
    else:
        mode = "production"
        check("mode_endpoint_consistency", "production mode: none of /reset, /step, /state", "/step" not in paths and "/state" not in paths, "/step or /state is listed without /reset")

    passed = all(entry["passed"] for entry in criteria)
    failed = [entry["id"] for entry in criteria if not entry["passed"]]
    return {
        "target": base,
        "validation_type": "running_environment",
        "standard_version": "1.0.0",
        "standard_profile": "openenv-http/1.x" if isinstance(version, str) and version.startswith("1.") else "openenv-http/unknown",
        "mode": mode,
        "passed": passed,
        "summary": {"passed_count": len(criteria) - len(failed), "total_count": len(criteria), "failed_criteria": failed},
        "criteria": criteria,
    }


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    report = validate(argv[1])
    print(json.dumps(report, indent=2))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
