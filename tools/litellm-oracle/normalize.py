#!/usr/bin/env python3
"""Normalizes recorded oracle traces in place so that re-recording gives byte-identical files, and
writes SUMMARY.txt (one line per scenario) beside them.

Usage: python normalize.py DIR      (DIR holds calls/*.json and streams/*.json)

Only wall-clock measurements are touched; every decision stays as recorded:
  * "wall_seconds" (only with --real-sleep) is dropped;
  * stream traces: every "t_ms" (milliseconds since the request started) is dropped. Absolute times
    are not stable (the first streamed request of a process spends seconds in one-off setup, and the
    machine's load adds more); what a test needs is the gap that a timeout makes, so a raise that
    ends a scripted wait (right after a "stall" or "first_delay" entry of the same stream log) gets
    "since_prev_ms", the wait's length rounded down to 100 ms: a stall then a ReadTimeout 500 ms
    later reads 500;
  * the "summary" line of a stream trace carries the end time (" @1234ms"): removed.
"""

from __future__ import annotations

import glob
import json
import os
import re
import sys

ROUND_MS = 100


def dumps(value, indent: int = 0, width: int = 200) -> str:
    """oracle.dumps (copied so this file does not import litellm): one short object per line."""
    flat = json.dumps(value, default=str)
    if not isinstance(value, (dict, list)) or not value or len(flat) + indent <= width:
        return flat
    pad = " " * (indent + 1)
    if isinstance(value, dict):
        body = ",\n".join(f"{pad}{json.dumps(k)}: {dumps(v, indent + 1, width)}" for k, v in value.items())
        return "{\n" + body + "\n" + " " * indent + "}"
    body = ",\n".join(f"{pad}{dumps(v, indent + 1, width)}" for v in value)
    return "[\n" + body + "\n" + " " * indent + "]"


def round_ms(value: float) -> int:
    """Down to a multiple of 100 ms: a wait overshoots under load but never ends early."""
    return int(value // ROUND_MS * ROUND_MS)


def stream_gaps(attempt: dict) -> None:
    """Adds "since_prev_ms" to a raise that ends a scripted wait (a "stall" or a "first_delay" entry
    just before it in the attempt's stream log): the time the wait lasted, rounded down to 100 ms.
    That is where a timeout shows (a stall then a ReadTimeout 500 ms later), and it is stable;
    absolute times, and gaps that are not scripted waits, are not."""
    prev = None
    for item in attempt.get("stream_log") or []:
        t = item.get("t_ms")
        if "raised" in item and prev is not None and isinstance(t, (int, float)) and isinstance(prev.get("t_ms"), (int, float)):
            item["since_prev_ms"] = round_ms(t - prev["t_ms"])
        prev = item if ("stall" in item or "first_delay" in item) else None


def normalize(value):
    if isinstance(value, dict):
        if value.get("type") == "attempt" and "stream_log" in value:
            stream_gaps(value)
        out = {}
        for k, v in value.items():
            if k in ("wall_seconds", "t_ms"):
                continue
            if k == "summary" and isinstance(v, str):
                v = re.sub(r" @\d+ms", "", v)
            out[k] = normalize(v)
        return out
    if isinstance(value, list):
        return [normalize(v) for v in value]
    return value


def summary_line(trace: dict) -> str:
    parts = []
    for r in trace.get("requests", []):
        if "wait" in r:
            parts.append(f"(wait {r['wait']}s; cooling: {','.join(r['cooldowns_after']) or '-'})")
        else:
            kw = (" " + json.dumps(r["kwargs"], sort_keys=True)) if r.get("kwargs") else ""
            conc = f" (concurrent {r['concurrent']})" if "concurrent" in r else ""
            parts.append(f"[{r['index']}] {r['model']}{kw}{conc}: {r['summary']}")
    return f"{trace.get('scenario')}: " + "  ||  ".join(parts)


def main() -> None:
    root = sys.argv[1]
    lines = []
    for kind in ("calls", "streams"):
        for path in sorted(glob.glob(os.path.join(root, kind, "*.json"))):
            with open(path) as f:
                trace = normalize(json.load(f))
            with open(path, "w") as f:
                f.write(dumps(trace) + "\n")
            lines.append(f"{kind}/{summary_line(trace)}")
    with open(os.path.join(root, "SUMMARY.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
