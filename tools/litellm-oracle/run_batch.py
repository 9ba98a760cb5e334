#!/usr/bin/env python3
"""Records many scenarios with one import of litellm: the parent imports the oracles (and so
litellm, ~4.5 s of CPU) once, then forks one child per scenario, at most JOBS at a time. Each child
starts from the same freshly imported state, builds its own Router and writes its trace, exactly as
`oracle.py X.json -o out` (or `stream/stream_oracle.py`) would in a process of its own.

Usage: python run_batch.py -j JOBS OUTDIR < jobs      (a job per line: "calls|streams <scenario.json>";
       the trace goes to OUTDIR/<kind>/<scenario name>.json, a failure's stderr beside it)
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "stream"))

import oracle  # noqa: E402
import stream_oracle  # noqa: E402


def child(kind: str, path: str, out: str) -> None:
    err = os.open(out[: -len(".json")] + ".stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(err, 2)
    code = 0
    try:
        text = oracle.record(path) if kind == "calls" else stream_oracle.record(path)
        with open(out, "w") as f:
            f.write(text + "\n")
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("outdir")
    args = parser.parse_args()
    jobs = [line.split(None, 1) for line in sys.stdin.read().splitlines() if line.strip()]
    running: dict[int, tuple[str, str]] = {}
    failed = []

    def reap() -> None:
        pid, status = os.wait()
        kind, out = running.pop(pid)
        if os.waitstatus_to_exitcode(status) != 0:
            failed.append((kind, out))
        else:
            stderr = out[: -len(".json")] + ".stderr"
            if os.path.exists(stderr):
                os.remove(stderr)

    for kind, path in jobs:
        path = path.strip()
        name = os.path.splitext(os.path.basename(path))[0]
        out = os.path.join(args.outdir, kind, name + ".json")
        while len(running) >= args.jobs:
            reap()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            child(kind, path, out)
        running[pid] = (kind, out)
    while running:
        reap()
    for kind, out in failed:
        print(f"run_batch: FAILED {kind}/{os.path.basename(out)}:", file=sys.stderr)
        with open(out[: -len(".json")] + ".stderr") as f:
            sys.stderr.write("".join(f.readlines()[-20:]))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
