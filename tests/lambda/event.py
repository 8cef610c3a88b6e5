#!/usr/bin/env python3
"""The local Lambda loop's events and answers (docs/deploy.md, Running the
functions locally), so the recipe needs no copy and paste.

  event.py NAME [token=T] [post=P]   prints fixture NAME (tests/fixtures/
      apigw-v2/NAME.json, or dynamodb-stream/NAME.json) with the token and
      the post id of earlier answers in place of FIXTURE_TOKEN and the
      fixtures' post id
  event.py --http NAME [...]         sends that event as an HTTP request to
      `cargo lambda watch`'s router (localhost:9000, or LAMBDA_ROUTER) and
      prints the answer as an invoke prints it
  event.py --answer FIELD            reads an invoke's answer on stdin and
      prints FIELD of its JSON body

token=, post= and user= replace FIXTURE_TOKEN, the fixtures' post id and
their username.
"""
import base64
import json
import os
import pathlib
import sys
import urllib.error
import urllib.request

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures"
# The post the handler tests seed (test_support::router::POST_ID).
FIXTURE_POST = "01JD3Z8Q6W4G7T2N5B8K1M0XYZ"
PLACEHOLDERS = {"token": "FIXTURE_TOKEN", "post": FIXTURE_POST, "user": "fixture_user"}


def event(name, values):
    for folder in ("apigw-v2", "dynamodb-stream", "eventbridge"):
        path = FIXTURES / folder / f"{name}.json"
        if path.exists():
            break
    else:
        sys.exit(f"event.py: no fixture named {name}")
    text = path.read_text()
    for pair in values:
        key, _, value = pair.partition("=")
        if key not in PLACEHOLDERS or not value:
            sys.exit(f"event.py: {pair!r}: expected token=..., post=... or user=...")
        text = text.replace(PLACEHOLDERS[key], value)
    # The body changed length: API Gateway's header would not match it.
    data = json.loads(text)
    data.get("headers", {}).pop("content-length", None)
    return data


def send(data):
    """The event as the HTTP request API Gateway turned into it."""
    router = os.environ.get("LAMBDA_ROUTER", "http://localhost:9000")
    query = data.get("rawQueryString")
    url = router + data["rawPath"] + (f"?{query}" if query else "")
    headers = {
        k: v
        for k, v in data.get("headers", {}).items()
        if k not in ("host", "content-length") and not k.startswith("x-forwarded-")
    }
    body = data.get("body")
    if body is not None:
        body = base64.b64decode(body) if data.get("isBase64Encoded") else body.encode()
    request = urllib.request.Request(url, data=body, headers=headers, method=data["requestContext"]["http"]["method"])
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            status, answer = response.status, response.read()
    except urllib.error.HTTPError as refused:
        status, answer = refused.code, refused.read()
    return json.dumps({"statusCode": status, "body": answer.decode(errors="replace")})


def answer(field):
    response = json.load(sys.stdin)
    body = response.get("body") or "null"
    if response.get("isBase64Encoded"):
        body = base64.b64decode(body).decode()
    body = json.loads(body)
    if not isinstance(body, dict) or field not in body:
        sys.exit(f"event.py: the answer ({response.get('statusCode')}) has no {field}: {body}")
    return body[field]


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--answer":
        print(answer(sys.argv[2]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "--http":
        print(send(event(sys.argv[2], sys.argv[3:])))
    elif len(sys.argv) >= 2 and not sys.argv[1].startswith("-"):
        print(json.dumps(event(sys.argv[1], sys.argv[2:])))
    else:
        sys.exit(__doc__)
