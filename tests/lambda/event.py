#!/usr/bin/env python3
"""The local Lambda loop's events and answers (docs/deploy.md, Running the
functions locally), so the recipe needs no copy and paste.

  event.py NAME [token=T] [post=P]   prints fixture NAME (tests/fixtures/
      apigw-v2/NAME.json, or dynamodb-stream/NAME.json) with the token and
      the post id of earlier answers in place of FIXTURE_TOKEN and the
      fixtures' post id
  event.py --answer FIELD            reads an invoke's answer on stdin and
      prints FIELD of its JSON body
"""
import json
import pathlib
import sys

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures"
# The post the handler tests seed (test_support::router::POST_ID).
FIXTURE_POST = "01JD3Z8Q6W4G7T2N5B8K1M0XYZ"
PLACEHOLDERS = {"token": "FIXTURE_TOKEN", "post": FIXTURE_POST}


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
            sys.exit(f"event.py: {pair!r}: expected token=... or post=...")
        text = text.replace(PLACEHOLDERS[key], value)
    # The body changed length: API Gateway's header would not match it.
    data = json.loads(text)
    data.get("headers", {}).pop("content-length", None)
    return json.dumps(data)


def answer(field):
    response = json.load(sys.stdin)
    body = json.loads(response.get("body") or "null")
    if not isinstance(body, dict) or field not in body:
        sys.exit(f"event.py: the answer ({response.get('statusCode')}) has no {field}: {body}")
    return body[field]


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--answer":
        print(answer(sys.argv[2]))
    elif len(sys.argv) >= 2 and not sys.argv[1].startswith("-"):
        print(event(sys.argv[1], sys.argv[2:]))
    else:
        sys.exit(__doc__)
