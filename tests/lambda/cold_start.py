#!/usr/bin/env python3
"""Cold starts of the functions beside a hello-world lambda_http function.

  cold_start.py --dir target/release --runs 15 signup login read ... hello-lambda

Each run starts one binary against the local Runtime API (boot.py) and times
process start to its first response (GET /health); the binaries take turns,
run by run, so machine noise falls on all of them alike. Prints one Markdown
table: median and P90 per binary and the ratio of each median to the
reference's (the last binary named, or --reference), and the median of each
round's own ratio ("paired").

A name ending in `+traces` runs that binary with traces on
(OTEL_EXPORTER_OTLP_ENDPOINT at a local OTLP receiver started here, which
answers every export 200): its first response then includes the flush of
that invocation's spans. `--requests N` also times N warm invocations per
binary in one boot (the median gap between answers), the per-request cost.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import boot  # noqa: E402


TRACED = "+traces"


class Receiver:
    """A local OTLP/HTTP endpoint: counts the exports and their bytes."""

    def __init__(self):
        receiver = self
        self.exports = 0
        self.bytes = 0

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                receiver.exports += 1
                receiver.bytes += len(body)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"


def with_traces(name, receiver):
    """Sets or clears the traces endpoint for `name`; returns the binary's own name."""
    if name.endswith(TRACED):
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
        return name[: -len(TRACED)]
    os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    return name


def warm_ms(args, boot_args, binary, event, requests):
    """The median gap between the answers of `requests` invocations in one boot."""
    import json as _json
    import subprocess
    import time
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for _ in range(requests + 1):
            f.write(_json.dumps(event) + "\n")
        events = f.name
    port = boot.free_port()
    api = subprocess.Popen([sys.executable, os.path.join(HERE, "runtime_api.py"), "--port", str(port),
                            "--events", events], stdout=subprocess.PIPE, text=True)
    assert _json.loads(api.stdout.readline())["listening"] == port
    fn = subprocess.Popen([os.path.join(args.dir, binary)], env=boot.function_env(port, binary), stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    try:
        stamps = []
        for _ in range(requests + 1):
            result = _json.loads(api.stdout.readline())
            if result["status"] != "response":
                raise SystemExit(f"{binary}: {result['status']}: {result['body']}")
            stamps.append(result["ms_since_start"])
    finally:
        fn.kill()
        fn.wait()
        api.kill()
        time.sleep(0.05)
    return statistics.median(b - a for a, b in zip(stamps, stamps[1:]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True, help="where the native release binaries are")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--reference", default="hello-lambda")
    parser.add_argument("--event", default=os.path.join(HERE, "..", "fixtures", "apigw-v2", "health.json"))
    parser.add_argument("--requests", type=int, default=0, help="also time this many warm invocations per binary")
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()
    receiver = Receiver()
    # What the functions need to start (no network: the DynamoDB client is
    # built, not called, for GET /health); an environment's own values win.
    os.environ.setdefault("JWT_SECRET", "cold-start-jwt-secret-0123456789abcdefghij")
    os.environ.setdefault("PEPPER", "cold-start-pepper-0123456789abcdefghijklmnop")
    os.environ.setdefault("TAG_KEY", "cold-start-tag-key-0123456789abcdefghijklm")
    os.environ.setdefault("TABLE_NAME", "community-boards")
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
    # As Lambda runs them: the region set, no extra CA bundle (a machine's
    # AWS_CA_BUNDLE would make the functions read and parse it at start).
    os.environ.setdefault("AWS_REGION", "us-east-1")
    os.environ.pop("AWS_CA_BUNDLE", None)
    boot_args = argparse.Namespace(qemu=False, verbose=False)
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write(json.dumps(json.load(open(args.event))) + "\n")
        event_file = f.name
    times = {name: [] for name in args.binaries}
    for _ in range(args.runs):
        for name in args.binaries:
            binary = with_traces(name, receiver)
            boot_args.bootstrap = os.path.join(args.dir, binary)
            ms, response = boot.run_once(boot_args, event_file, binary)
            if response.get("statusCode") != 200:
                raise SystemExit(f"{name}: GET /health answered {response.get('statusCode')}")
            times[name].append(ms)
    warm = {}
    if args.requests:
        event = json.load(open(args.event))
        for name in args.binaries:
            warm[name] = warm_ms(args, boot_args, with_traces(name, receiver), event, args.requests)
    os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    if any(name.endswith(TRACED) for name in args.binaries) and receiver.exports == 0:
        raise SystemExit("traces were on for some binaries, but no export reached the receiver")
    reference = statistics.median(times[args.reference])
    print(f"| function | median ms | P90 ms | x {args.reference} | paired x | binary bytes |"
          + (" warm ms per request |" if warm else ""))
    print("|---|---:|---:|---:|---:|---:|" + ("---:|" if warm else ""))
    for name, samples in times.items():
        median = statistics.median(samples)
        p90 = sorted(samples)[max(0, int(len(samples) * 0.9) - 1)]
        # The median of each round's own ratio: a round's binaries run back
        # to back, so the machine's drift between rounds cancels out.
        paired = statistics.median(a / b for a, b in zip(samples, times[args.reference]))
        size = os.path.getsize(os.path.join(args.dir, name.removesuffix(TRACED)))
        row = f"| {name} | {median:.1f} | {p90:.1f} | {median / reference:.2f} | {paired:.2f} | {size:,} |"
        if warm:
            row += f" {warm[name]:.2f} |"
        print(row)
    if receiver.exports:
        print(f"\nOTLP receiver: {receiver.exports} exports, {receiver.bytes:,} bytes")


if __name__ == "__main__":
    main()
