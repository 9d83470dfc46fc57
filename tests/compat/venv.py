#!/usr/bin/env python3
"""venv.py path|check|install — the original Python project (sqllocks-shape
0.9.3 and its Kafka plugin with its avro and protobuf extras, and its
domains, tests/compat/requirements.txt) in a
virtual environment of its own, for tests/compat and bench/original.sh.

Why: the original is the oracle the compatibility suite runs beside ours and
a benchmark peer; it must never touch the system Python, must be exactly the
pinned wheels (hashes), and must not be rebuilt on every make test.

How: the venv lives in $SHAPE_COMPAT_VENV, or else in
${XDG_CACHE_HOME:-~/.cache}/shape/compat-venv-<first 12 hex digits of the
sha256 of requirements.txt>, so a changed pin builds a new one and an
unchanged one is reused. `install` builds it with Debian's python3 -m venv
(package python3-venv) and pip install --require-hashes --no-deps
--only-binary :all:, in place (a venv's scripts name their own path, so it
cannot be built elsewhere and moved), then runs the original's `shape
--version` and writes the marker file .ready; a failed build is removed.
`check` exits 0 when the venv is ready and the packages import, else
prints one line naming what is missing (what the tests print as their SKIP
reason) and exits 1. `path` prints the venv's folder.
"""
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REQUIREMENTS = os.path.join(HERE, "requirements.txt")
PACKAGES = [("sqllocks-shape", "shape"), ("sqllocks-shape-kafka", "shape_kafka"),
            ("sqllocks-shape-domains", "shape_domains"), ("confluent-kafka", "confluent_kafka"),
            ("fastavro", "fastavro"), ("protobuf", "google.protobuf")]


def digest():
    with open(REQUIREMENTS, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def path():
    if os.environ.get("SHAPE_COMPAT_VENV"):
        return os.environ["SHAPE_COMPAT_VENV"]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "shape", "compat-venv-" + digest()[:12])


def original(venv=None):
    """The original's `shape` command in the venv."""
    return os.path.join(venv or path(), "bin", "shape")


def check():
    """None when ready, else the reason (one line) naming what is missing."""
    venv = path()
    if not os.path.exists(os.path.join(venv, ".ready")):
        return ("the original (sqllocks-shape-kafka==0.9.3, PyPI) is not installed: no venv at %s; "
                "scripts/install-deps builds it (needs python3-venv and PyPI)" % venv)
    py = os.path.join(venv, "bin", "python")
    probe = ("import importlib, sys\n"
             "for dist, module in %r:\n"
             "    try: importlib.import_module(module)\n"
             "    except Exception: print(dist, module); sys.exit(1)\n" % PACKAGES)
    r = subprocess.run([py, "-c", probe], capture_output=True, text=True)
    if r.returncode != 0:
        dist, module = (r.stdout.split() + ["?", "?"])[:2]
        return "package %s is missing from %s (import %s failed); rerun scripts/install-deps" % (dist, venv, module)
    return None


def install():
    venv = path()
    if os.path.exists(os.path.join(venv, ".ready")):
        return 0
    os.makedirs(os.path.dirname(venv), exist_ok=True)
    with open(venv + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two install-deps at once build it once
        if os.path.exists(os.path.join(venv, ".ready")):
            return 0
        shutil.rmtree(venv, ignore_errors=True)
        print("install-deps: building the original's venv (tests/compat/requirements.txt) in %s" % venv,
              file=sys.stderr)
        steps = [[sys.executable, "-m", "venv", venv],
                 [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                  "--require-hashes", "--no-deps", "--only-binary", ":all:", "-r", REQUIREMENTS],
                 [original(venv), "--version"]]
        for cmd in steps:
            r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=900)
            if r.returncode != 0:
                tail = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
                print("install-deps: could not build the original's venv (%s: %s); the compatibility suite "
                      "and the original's bench rows will be skipped" % (os.path.basename(cmd[0]), tail), file=sys.stderr)
                shutil.rmtree(venv, ignore_errors=True)
                return 1
        with open(os.path.join(venv, ".ready"), "w") as f:
            f.write(digest() + "\n")
    return 0


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "path":
        print(path())
    elif what == "check":
        reason = check()
        if reason:
            print(reason)
            sys.exit(1)
    elif what == "install":
        sys.exit(install())
    else:
        print("usage: venv.py path|check|install", file=sys.stderr)
        sys.exit(2)
