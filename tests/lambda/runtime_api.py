#!/usr/bin/env python3
"""A minimal AWS Lambda Runtime API, enough to boot a function and invoke it.

It serves one event per line of the events file in order through
GET /2018-06-01/runtime/invocation/next, records what the function posts to
.../response or .../error, and prints one JSON line per invocation to stdout:
{"request_id", "status": "response"|"error", "body", "ms_since_start"}.
With --once it exits after the first result. Only what the boot and
cold-start checks need; AWS's own emulator is a Docker image we cannot run.
"""
import argparse
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIX = "/2018-06-01/runtime"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--events", required=True, help="file with one JSON event per line")
    parser.add_argument("--once", action="store_true", help="exit after the first invocation result")
    args = parser.parse_args()

    events = [line for line in open(args.events).read().splitlines() if line.strip()]
    pending = list(events)
    lock = threading.Lock()
    started = time.monotonic()
    done = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def reply(self, status, body=b"", headers=None):
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path != f"{PREFIX}/invocation/next":
                return self.reply(404)
            while True:
                with lock:
                    event = pending.pop(0) if pending else None
                if event is not None:
                    break
                if done.is_set():
                    return self.reply(410)
                time.sleep(0.05)
            request_id = str(uuid.uuid4())
            deadline = int(time.time() * 1000) + 30_000
            self.reply(200, event.encode(), {
                "content-type": "application/json",
                "lambda-runtime-aws-request-id": request_id,
                "lambda-runtime-deadline-ms": str(deadline),
                "lambda-runtime-invoked-function-arn": "arn:aws:lambda:eu-central-1:123456789012:function:local",
                "lambda-runtime-trace-id": "Root=1-00000000-000000000000000000000000",
            })

        def do_POST(self):
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length).decode(errors="replace")
            parts = self.path[len(PREFIX):].strip("/").split("/")
            if parts[:1] == ["invocation"] and len(parts) == 3 and parts[2] in ("response", "error"):
                result = {"request_id": parts[1], "status": parts[2], "body": body,
                          "ms_since_start": round((time.monotonic() - started) * 1000, 1)}
            elif parts == ["init", "error"]:
                result = {"request_id": None, "status": "init_error", "body": body,
                          "ms_since_start": round((time.monotonic() - started) * 1000, 1)}
            else:
                return self.reply(404)
            self.reply(202, b'{"status":"OK"}', {"content-type": "application/json"})
            # One write per line, under the lock: answers may come from
            # several handler threads at once.
            with lock:
                sys.stdout.write(json.dumps(result) + "\n")
                sys.stdout.flush()
            if args.once or result["status"] == "init_error":
                done.set()

    class Server(ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            # The function is killed while long-polling for its next event: expected.
            pass

    server = Server(("127.0.0.1", args.port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"listening": args.port}), flush=True)
    done.wait()
    time.sleep(0.1)
    server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
