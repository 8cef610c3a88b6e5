"""Which functions' arm64 bootstraps `sam build` must build again.

A fresh clone gives every file a new mtime, so cargo rebuilds every function
even when none of its sources changed. This keys each function by the
contents of what its last build read: the source files its dep-info lists
(cargo's `<binary>.d`: every local file the binary was compiled from,
`include_str!`s too), Cargo.lock, the workspace and function manifests,
its SAM build metadata and the toolchain. An unchanged key reuses the
bootstrap kept from that build.

    build_cache.py list   TEMPLATE
        prints the logical ids of the template's Rust functions
    build_cache.py stale  TEMPLATE CACHE_DIR TARGET_DIR TOOLCHAIN_ID
        prints the logical ids (ReadFunction ...) whose key changed or is unknown
    build_cache.py keep   TEMPLATE CACHE_DIR TARGET_DIR TOOLCHAIN_ID BUILD_DIR ID...
        after a build: records the keys and keeps the named bootstraps
    build_cache.py restore TEMPLATE CACHE_DIR BUILD_DIR ID...
        copies kept bootstraps into BUILD_DIR/<id>/bootstrap
"""

import glob
import hashlib
import os
import re
import shutil
import sys


def functions(template):
    """Logical id -> (binary, metadata text) from the template's functions."""
    found, text = {}, open(template).read()
    for match in re.finditer(r"^  (\w+Function):\n((?:    .*\n|\n)+)", text, re.M):
        body = match.group(2)
        binary = re.search(r"^        Binary: (\S+)$", body, re.M)
        if binary:
            metadata = body.split("    Properties:")[0]
            found[match.group(1)] = (binary.group(1), metadata)
    return found


def dep_info_files(target_dir, binary):
    """The files the binary's last arm64 release build read, or None."""
    for path in glob.glob(os.path.join(target_dir, "aarch64-unknown-linux-gnu*", "release", binary + ".d")):
        first = open(path).read().split("\n")[0]
        # "out: a.rs b.rs", spaces in names escaped with a backslash.
        names = re.split(r"(?<!\\) ", first.split(": ", 1)[1])
        return sorted(name.replace("\\ ", " ") for name in names if name)
    return None


def key(template, target_dir, toolchain, logical_id):
    binary, metadata = functions(template)[logical_id]
    files = dep_info_files(target_dir, binary)
    if files is None:
        return None
    root = os.path.dirname(os.path.dirname(os.path.abspath(template)))
    # A build from another checkout wrote this dep-info: its files are not ours.
    if not all(os.path.abspath(name).startswith(root + os.sep) for name in files):
        return None
    digest = hashlib.sha256()
    digest.update(toolchain.encode() + metadata.encode())
    for name in files + [f"{root}/Cargo.lock", f"{root}/Cargo.toml", f"{root}/functions/{binary}/Cargo.toml"]:
        digest.update(name.encode())
        try:
            digest.update(hashlib.sha256(open(name, "rb").read()).digest())
        except FileNotFoundError:
            return None
    return digest.hexdigest()


def main():
    command, template = sys.argv[1], sys.argv[2]
    if command == "list":
        print("\n".join(functions(template)))
        return
    cache = sys.argv[3]
    os.makedirs(cache, exist_ok=True)
    if command == "stale":
        target_dir, toolchain = sys.argv[4], sys.argv[5]
        for logical_id in functions(template):
            kept = os.path.join(cache, logical_id)
            current = key(template, target_dir, toolchain, logical_id)
            fresh = (
                current is not None
                and os.path.exists(kept + ".key")
                and open(kept + ".key").read() == current
                and os.path.exists(kept + ".bootstrap")
            )
            if not fresh:
                print(logical_id)
    elif command == "keep":
        target_dir, toolchain, build_dir = sys.argv[4], sys.argv[5], sys.argv[6]
        for logical_id in sys.argv[7:]:
            kept = os.path.join(cache, logical_id)
            shutil.copy2(os.path.join(build_dir, logical_id, "bootstrap"), kept + ".bootstrap")
            with open(kept + ".key", "w") as out:
                out.write(key(template, target_dir, toolchain, logical_id) or "")
    elif command == "restore":
        build_dir = sys.argv[4]
        for logical_id in sys.argv[5:]:
            os.makedirs(os.path.join(build_dir, logical_id), exist_ok=True)
            shutil.copy2(os.path.join(cache, logical_id + ".bootstrap"), os.path.join(build_dir, logical_id, "bootstrap"))
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
