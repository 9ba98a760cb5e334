#!/usr/bin/env bash
# Records the import fixtures: each incident of crates/import/tests/fixtures/incidents/ is
# played by `routersim drive` (its fake providers, its traffic) through the real LiteLLM proxy,
# whose logging callback (import_logger.py) writes the standard logging payload and the spend
# log rows. Per incident, DIR/<name>/ gets:
#   litellm.yaml             the proxy config drive emitted (plus the callback), what import reads
#   standard_logging.jsonl.gz  the standard logging payload, one JSON per line, in the hooks'
#                            order (gzipped: each line carries ~9 KB of the model cost map)
#   spend_logs.jsonl.gz      the LiteLLM_SpendLogs rows the proxy built, one JSON per line
#   live/summary.json        the live report drive wrote (the replay is compared with it)
#   live/provider_calls.csv  what the fake providers saw (the ground truth of every call)
# A run is kept only when every request was answered and the proxy kept up (the median request
# after the incident's windows under 1.5 s); otherwise the incident is recorded once more, and a
# second miss fails the script.
# The scenario that drove the providers (incidents/<name>.yaml) is the ground truth of the
# faults. Recordings differ from run to run (wall-clock timing, LiteLLM's shuffle), so they are
# never compared byte for byte: `cargo test --test import` holds the import of each one to the
# truth within tolerances (ROUTERSIM_IMPORT_RECORDED=DIR points it at a fresh recording).
#
# Usage: tools/litellm-import/record.sh [--out DIR] [--routersim BIN] [--python PY] [-j N] [NAME...]
#   --out DIR       where to write (default: the committed fixtures, crates/import/tests/fixtures/recorded)
#   --routersim BIN the routersim binary (default: target/release/routersim)
#   --python PY     the interpreter that has litellm (default: target/litellm-venv/bin/python)
#   -j N            incidents recorded at once (default 3)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
INCIDENTS=$ROOT/crates/import/tests/fixtures/incidents
OUT=$ROOT/crates/import/tests/fixtures/recorded
BIN=$ROOT/target/release/routersim
PY=$ROOT/target/litellm-venv/bin/python
JOBS=3
NAMES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT=$2; shift 2 ;;
    --routersim) BIN=$2; shift 2 ;;
    --python) PY=$2; shift 2 ;;
    -j) JOBS=$2; shift 2 ;;
    -*) echo "usage: $0 [--out DIR] [--routersim BIN] [--python PY] [-j N] [NAME...]" >&2; exit 2 ;;
    *) NAMES+=("$1"); shift ;;
  esac
done
case "$PY" in /*) ;; *) PY=$PWD/$PY ;; esac
case "$BIN" in /*) ;; *) BIN=$PWD/$BIN ;; esac
case "$OUT" in /*) ;; *) OUT=$PWD/$OUT ;; esac
LITELLM=$(dirname "$PY")/litellm
for tool in "$PY" "$LITELLM" "$BIN"; do
  if ! [ -x "$tool" ]; then echo "record.sh: no executable at $tool" >&2; exit 2; fi
done
if [ ${#NAMES[@]} -eq 0 ]; then
  for f in "$INCIDENTS"/*.yaml; do NAMES+=("$(basename "$f" .yaml)"); done
fi
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/routersim-import-record.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

free_port() {
  "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# One incident: drive + LiteLLM; the files into $OUT/<name>/ only when all went well.
record_one() {
  local name=$1 scenario=$INCIDENTS/$1.yaml
  local dir=$WORK/$name port key drive proxy
  rm -rf "$dir"; mkdir -p "$dir"
  port=$(free_port)
  key="sk-routersim-import-$$-$RANDOM$RANDOM"
  "$BIN" drive "$scenario" --target "http://127.0.0.1:$port" --api-key "$key" \
    --emit-litellm-config "$dir/emitted.yaml" --wait-for-target 150s --drain 10s \
    --out "$dir/live" >"$dir/drive.out" 2>"$dir/drive.err" &
  drive=$!
  for _ in $(seq 600); do [ -s "$dir/emitted.yaml" ] && break; sleep 0.05; done
  if ! [ -s "$dir/emitted.yaml" ]; then
    echo "record.sh: $name: drive wrote no config" >&2; cat "$dir/drive.err" >&2
    kill "$drive" 2>/dev/null || true; return 1
  fi
  # The emitted config plus the logging callback, loaded from the file beside it.
  "$PY" - "$dir/emitted.yaml" "$dir/litellm.yaml" <<'PYEOF'
import sys, yaml
config = yaml.safe_load(open(sys.argv[1])) or {}
config.setdefault("litellm_settings", {})["callbacks"] = ["import_logger.handler"]
with open(sys.argv[2], "w") as f:
    f.write("# The proxy config `routersim drive --emit-litellm-config` wrote for this recording,\n")
    f.write("# plus the logging callback (tools/litellm-import/import_logger.py).\n")
    yaml.safe_dump(config, f, sort_keys=False)
PYEOF
  cp "$HERE/import_logger.py" "$dir/import_logger.py"
  ROUTERSIM_IMPORT_LOG="$dir/standard_logging.jsonl" ROUTERSIM_SPEND_LOG="$dir/spend_logs.jsonl" \
    LITELLM_MASTER_KEY="$key" LITELLM_LOCAL_MODEL_COST_MAP=True \
    "$LITELLM" --config "$dir/litellm.yaml" --host 127.0.0.1 --port "$port" \
    >"$dir/litellm.out" 2>&1 &
  proxy=$!
  local status=0
  wait "$drive" || status=$?
  kill "$proxy" 2>/dev/null || true
  wait "$proxy" 2>/dev/null || true
  if [ "$status" != 0 ]; then
    echo "record.sh: $name: drive failed (exit $status)" >&2
    cat "$dir/drive.out" "$dir/drive.err" >&2; tail -n 30 "$dir/litellm.out" >&2
    return 1
  fi
  # A recording is only as good as the live run: a proxy that could not keep up (a loaded
  # machine) leaves requests unanswered, and that run is not the incident.
  local unfinished
  unfinished=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["live"]["unfinished"])' "$dir/live/summary.json")
  if [ "$unfinished" != 0 ]; then
    echo "record.sh: $name: $unfinished requests unanswered when the run ended (the proxy could not keep up)" >&2
    return 1
  fi
  # Nor is the run of a proxy starved of CPU (a loaded machine, proxies beside one another): it
  # answers in seconds where the fakes take tens of ms, and retries and falls back otherwise.
  # Requests after the incident's windows are the healthy ones: their median must stay under
  # 1.5 s. A proxy that kept up answered them in 90-960 ms (sixteen recordings on a loaded
  # 2-core machine, the fakes answering in 40-150 ms); one at 2.7 s dated the fakes' 10 ms 429s
  # at 0.4-1 s in its own log, let five requests at a time through each cooldown, and its
  # storm was not the incident (its replay called gpt-a 108 times where it had 95).
  if ! "$PY" - "$dir/live/summary.json" <<'PYEOF'
import json, sys
windows = json.load(open(sys.argv[1])).get("windows") or []
slow = max([(w.get("after") or {}).get("p50_latency_ms") or 0 for w in windows] or [0])
if slow > 1500:
    print(f"record.sh: the proxy was starved: requests after the incident took {slow:.0f} ms (median), more than 1.5 s", file=sys.stderr)
    sys.exit(1)
PYEOF
  then
    echo "record.sh: $name: not recorded (a starved proxy's run is not the incident)" >&2
    return 1
  fi
  local dest=$OUT/$name
  rm -rf "$dest"; mkdir -p "$dest/live"
  cp "$dir/litellm.yaml" "$dest/"
  gzip -9 -n -c "$dir/standard_logging.jsonl" >"$dest/standard_logging.jsonl.gz"
  gzip -9 -n -c "$dir/spend_logs.jsonl" >"$dest/spend_logs.jsonl.gz"
  cp "$dir/live/summary.json" "$dir/live/provider_calls.csv" "$dest/live/"
  echo "record.sh: $name: $(wc -l <"$dir/standard_logging.jsonl") payload lines, $(wc -l <"$dir/spend_logs.jsonl") spend log rows; $(head -n 3 "$dir/drive.out" | tail -n 2 | tr -s ' ' | tr '\n' ';')"
}

failed=0
running=0
pids=()
for name in "${NAMES[@]}"; do
  if ! [ -f "$INCIDENTS/$name.yaml" ]; then echo "record.sh: no incident $INCIDENTS/$name.yaml" >&2; exit 2; fi
  { record_one "$name" || { echo "record.sh: $name: recording again" >&2; record_one "$name"; }; } &
  pids+=($!)
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}"); running=$((running - 1))
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
if [ "$failed" != 0 ]; then echo "record.sh: a recording failed (see above)" >&2; exit 1; fi
echo "record.sh: recorded ${#NAMES[@]} incidents into $OUT in ${SECONDS}s"
