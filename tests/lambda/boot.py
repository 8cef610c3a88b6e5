#!/usr/bin/env python3
"""Boots a Lambda bootstrap against the local Runtime API and checks one invocation.

  boot.py --bootstrap target/lambda/read/bootstrap --event tests/fixtures/apigw-v2/read-list.json \
          [--qemu] [--expect-status 200 | --expect-body JSON] [--runs 1]

--expect-body is for a function that is not behind API Gateway (purge):
the response must equal that JSON.

With --qemu the (arm64) bootstrap runs under qemu-aarch64 user emulation.
Prints one JSON line per run: {"function", "cold_start_ms", "status_code"};
cold_start_ms is process start to the first response reaching the Runtime API.
Exits non-zero when a run does not answer the expected status.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def function_env(port, function):
    """The process environment plus what Lambda sets for `function`, its Runtime API at `port`."""
    env = dict(os.environ)
    env.update({
        "AWS_LAMBDA_RUNTIME_API": f"127.0.0.1:{port}",
        "AWS_LAMBDA_FUNCTION_NAME": function,
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{function}",
        "AWS_LAMBDA_LOG_STREAM_NAME": "local",
        "AWS_REGION": "eu-central-1",
    })
    return env


def run_once(args, event_file, function):
    port = free_port()
    api = subprocess.Popen([sys.executable, os.path.join(HERE, "runtime_api.py"), "--port", str(port),
                            "--events", event_file, "--once"], stdout=subprocess.PIPE, text=True)
    assert json.loads(api.stdout.readline())["listening"] == port
    env = function_env(port, function)
    command = [args.bootstrap]
    if args.qemu:
        command = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", args.bootstrap]
    started = time.monotonic()
    fn = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL if not args.verbose else None,
                          stderr=subprocess.PIPE if not args.verbose else None)
    try:
        line = api.stdout.readline()
        elapsed_ms = (time.monotonic() - started) * 1000
    finally:
        fn.kill()
        fn.wait()
        api.kill()
    if not line:
        err = fn.stderr.read().decode(errors="replace") if fn.stderr else ""
        raise SystemExit(f"{function}: no invocation result; function stderr:\n{err}")
    result = json.loads(line)
    if result["status"] != "response":
        raise SystemExit(f"{function}: {result['status']}: {result['body']}")
    response = json.loads(result["body"])
    return round(elapsed_ms, 1), response


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--event", required=True)
    parser.add_argument("--function", default=None)
    parser.add_argument("--qemu", action="store_true")
    parser.add_argument("--expect-status", type=int, default=200)
    parser.add_argument("--expect-body", default=None)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    function = args.function or os.path.basename(os.path.dirname(os.path.abspath(args.bootstrap)))

    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write(json.dumps(json.load(open(args.event))) + "\n")
        event_file = f.name
    times = []
    for _ in range(args.runs):
        ms, response = run_once(args, event_file, function)
        if args.expect_body is not None:
            print(json.dumps({"function": function, "cold_start_ms": ms, "response": response}), flush=True)
            if response != json.loads(args.expect_body):
                raise SystemExit(f"{function}: expected {args.expect_body}, got {json.dumps(response)}")
            times.append(ms)
            continue
        status = response.get("statusCode")
        print(json.dumps({"function": function, "cold_start_ms": ms, "status_code": status,
                          "body": response.get("body", "")[:200]}), flush=True)
        if status != args.expect_status:
            raise SystemExit(f"{function}: expected status {args.expect_status}, got {status}")
        times.append(ms)
    if args.runs > 1:
        print(json.dumps({"function": function, "runs": args.runs,
                          "median_cold_start_ms": round(statistics.median(times), 1)}), flush=True)


if __name__ == "__main__":
    main()
