#!/usr/bin/env python3
"""Cold starts of the functions beside a hello-world lambda_http function.

  cold_start.py --dir target/release --runs 15 signup login read ... hello-lambda

Each run starts one binary against the local Runtime API (boot.py) and times
process start to its first response (GET /health); the binaries take turns,
run by run, so machine noise falls on all of them alike. Prints one Markdown
table: median and P90 per binary and the ratio of each median to the
reference's (the last binary named, or --reference), and the median of each
round's own ratio ("paired").
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import boot  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True, help="where the native release binaries are")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--reference", default="hello-lambda")
    parser.add_argument("--event", default=os.path.join(HERE, "..", "fixtures", "apigw-v2", "health.json"))
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()
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
            boot_args.bootstrap = os.path.join(args.dir, name)
            ms, response = boot.run_once(boot_args, event_file, name)
            if response.get("statusCode") != 200:
                raise SystemExit(f"{name}: GET /health answered {response.get('statusCode')}")
            times[name].append(ms)
    reference = statistics.median(times[args.reference])
    print(f"| function | median ms | P90 ms | x {args.reference} | paired x | binary bytes |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, samples in times.items():
        median = statistics.median(samples)
        p90 = sorted(samples)[max(0, int(len(samples) * 0.9) - 1)]
        # The median of each round's own ratio: a round's binaries run back
        # to back, so the machine's drift between rounds cancels out.
        paired = statistics.median(a / b for a, b in zip(samples, times[args.reference]))
        size = os.path.getsize(os.path.join(args.dir, name))
        print(f"| {name} | {median:.1f} | {p90:.1f} | {median / reference:.2f} | {paired:.2f} | {size:,} |")


if __name__ == "__main__":
    main()
