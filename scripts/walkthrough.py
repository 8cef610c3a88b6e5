"""Runs docs/walkthrough.md's shell block exactly as printed and checks each
`# => A...B` line against the output of the command before it: A, then B
later, must appear in it. Commands are told apart by `bash -n`: a line ends
one when everything since the last is a complete command. Only a marker
line (`echo`) goes between them. B (the server) comes from the environment.
"""

import os
import re
import subprocess
import sys

MARK = "@@walkthrough-step "


def block(path):
    text = open(path, encoding="utf-8").read()
    found = re.search(r"```sh\n(.*?)```", text, re.S)
    if not found:
        sys.exit(f"{path}: no ```sh block")
    return found.group(1)


def complete(lines):
    if lines[-1].rstrip().endswith("\\"):
        return False
    return subprocess.run(["bash", "-n"], input="\n".join(lines), text=True, capture_output=True).returncode == 0


def steps(source):
    """[(command text, [expected fragments lists])], in order."""
    out, pending = [], []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith("# =>") and not pending:
            if not out:
                sys.exit("an expectation before any command")
            out[-1][1].append(stripped[len("# =>"):].strip().split("..."))
            continue
        if (stripped.startswith("#") or not stripped) and not pending:
            continue
        pending.append(line)
        if complete(pending):
            out.append(("\n".join(pending), []))
            pending = []
    if pending:
        sys.exit("the block ends inside a command:\n" + "\n".join(pending))
    return out


def check(output, fragments):
    at = 0
    for fragment in fragments:
        found = output.find(fragment, at)
        if found < 0:
            return fragment
        at = found + len(fragment)
    return None


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "docs/walkthrough.md"
    walk = steps(block(path))
    script = "set -euo pipefail\n" + "".join(f"echo '{MARK}{i}'\n{command}\n" for i, (command, _) in enumerate(walk))
    run = subprocess.run(["bash", "-c", script], text=True, capture_output=True, timeout=300, env=os.environ)
    # A marker may follow output that ends without a newline (curl's JSON).
    parts = re.split(re.escape(MARK) + r"(\d+)\n", run.stdout)
    outputs = {int(parts[k]): parts[k + 1] for k in range(1, len(parts) - 1, 2)}
    failures = []
    if run.returncode != 0:
        last = max(outputs, default=0)
        failures.append(f"the walkthrough stopped (exit {run.returncode}) at:\n{walk[last][0]}\n{run.stderr[-2000:]}")
    for i, (command, expectations) in enumerate(walk):
        for fragments in expectations:
            if i not in outputs:
                continue
            missing = check(outputs[i], fragments)
            if missing is not None:
                failures.append(f"{command}\n  expected {'...'.join(fragments)!r}\n  missing {missing!r}\n  output {outputs[i][:600]!r}")
    checked = sum(len(e) for _, e in walk)
    if failures:
        print(f"walkthrough: {len(failures)} of {checked} checks failed", file=sys.stderr)
        for failure in failures:
            print("\n" + failure, file=sys.stderr)
        sys.exit(1)
    print(f"walkthrough: {len(walk)} commands run as printed, {checked} outputs as the page says")


if __name__ == "__main__":
    main()
