#!/usr/bin/env bash
# Records every oracle scenario with the real LiteLLM (see README.md, "How routersim uses it") into
# a temp dir under target/, normalizes the traces (normalize.py) and writes the summary, then either
# installs them as the committed fixtures under crates/oracle/tests/fixtures/litellm-oracle/ or, with --check,
# compares them with the committed ones and exits 1 when any file differs.
#
# Usage: tools/litellm-oracle/record.sh [--check] [--python PY] [-j N]
#   --python PY   the interpreter that has litellm (default: target/litellm-venv/bin/python)
#   -j N          parallel jobs (default: nproc)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=$ROOT/target/litellm-venv/bin/python
CHECK=0
JOBS=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --check) CHECK=1; shift ;;
    --python) PY=$2; shift 2 ;;
    -j) JOBS=$2; shift 2 ;;
    *) echo "usage: $0 [--check] [--python PY] [-j N]" >&2; exit 2 ;;
  esac
done
case "$PY" in /*) ;; *) PY=$PWD/$PY ;; esac  # not resolved: a venv's python finds its venv by its path
if ! [ -x "$PY" ]; then echo "record.sh: no python at $PY" >&2; exit 2; fi
FIX=$ROOT/crates/oracle/tests/fixtures/litellm-oracle
mkdir -p "$ROOT/target"
OUT=$(mktemp -d "$ROOT/target/litellm-oracle-record.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
mkdir -p "$OUT/calls" "$OUT/streams"
export PY HERE OUT LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}"
unset LITELLM_MAX_STREAMING_DURATION_SECONDS

# One job per scenario ("<kind> <scenario file>"), run by run_batch.py: litellm is imported once and
# each scenario runs in a forked child of its own.
{
  for f in "$HERE"/scenarios/*.json; do echo "calls $f"; done
  for f in "$HERE"/stream/scenarios/*.json; do if [ -e "$f" ]; then echo "streams $f"; fi; done
} > "$OUT/jobs"
if ! "$PY" "$HERE/run_batch.py" -j "$JOBS" "$OUT" < "$OUT/jobs"; then
  echo "record.sh: recording failed (see above)" >&2
  exit 2
fi
rm -f "$OUT/jobs"

"$PY" "$HERE/normalize.py" "$OUT"

if [ "$CHECK" = 1 ]; then
  changed=0
  for kind in calls streams; do
    for f in "$OUT/$kind"/*.json "$FIX/$kind"/*.json; do
      [ -e "$f" ] || continue
      name=$(basename "$f")
      if ! [ -e "$FIX/$kind/$name" ]; then echo "new:     $kind/$name"; changed=1
      elif ! [ -e "$OUT/$kind/$name" ]; then echo "missing: $kind/$name"; changed=1
      elif [ "$f" = "$OUT/$kind/$name" ] && ! cmp -s "$f" "$FIX/$kind/$name"; then
        echo "changed: $kind/$name"; diff -u "$FIX/$kind/$name" "$f" | head -n 40 || true; changed=1
      fi
    done
  done
  if ! cmp -s "$OUT/SUMMARY.txt" "$FIX/SUMMARY.txt"; then echo "changed: SUMMARY.txt"; changed=1; fi
  if [ "$changed" = 1 ]; then
    echo "record.sh --check: the traces recorded with $("$PY" -c 'import litellm, importlib.metadata as m; print("litellm", m.version("litellm"))') differ from crates/oracle/tests/fixtures/litellm-oracle (see above)" >&2
    exit 1
  fi
  echo "record.sh --check: all $(ls "$OUT"/calls/*.json "$OUT"/streams/*.json 2>/dev/null | wc -l) traces match crates/oracle/tests/fixtures/litellm-oracle"
else
  mkdir -p "$FIX"
  rm -rf "$FIX/calls" "$FIX/streams"
  cp -r "$OUT/calls" "$OUT/streams" "$OUT/SUMMARY.txt" "$FIX/"
  echo "record.sh: wrote $(ls "$FIX"/calls/*.json "$FIX"/streams/*.json 2>/dev/null | wc -l) traces and SUMMARY.txt into crates/oracle/tests/fixtures/litellm-oracle"
fi
