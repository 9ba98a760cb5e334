#!/usr/bin/env bash
# Runs every shipped scenario with two routersim binaries, on both runtimes, and compares every
# report file byte for byte: a refactoring or a speed-up must not change one output byte.
#
#   scripts/same-bytes.sh OLD_BINARY NEW_BINARY [SCENARIO ...]
#
# Without scenarios: every scenarios/**/*.yaml that the OLD binary runs (router configs and
# other non-scenario files are refused by both, exit 2, and must be refused alike). Prints one
# line per scenario and runtime, and exits 1 when any output, exit code or stdout differs.
set -uo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2
shift 2
if [ $# -gt 0 ]; then scenarios=("$@"); else mapfile -t scenarios < <(find scenarios -name '*.yaml' | sort); fi
work=$(mktemp -d /tmp/routersim-same-bytes.XXXXXX)
trap 'rm -rf "$work"' EXIT
status=0
for scenario in "${scenarios[@]}"; do
  for runtime in virtual tokio; do
    key=$(echo "$scenario" | tr '/' '_')-$runtime
    "$old" run "$scenario" --runtime "$runtime" --out "$work/old/$key" >"$work/old-$key.out" 2>"$work/old-$key.err"
    old_rc=$?
    "$new" run "$scenario" --runtime "$runtime" --out "$work/new/$key" >"$work/new-$key.out" 2>"$work/new-$key.err"
    new_rc=$?
    # The report path printed on stdout names the folder, which differs by design.
    sed -i "s|$work/old/|OUT/|g" "$work/old-$key.out" "$work/old-$key.err"
    sed -i "s|$work/new/|OUT/|g" "$work/new-$key.out" "$work/new-$key.err"
    if [ "$old_rc" != "$new_rc" ]; then
      echo "DIFFERS  $scenario ($runtime): exit $old_rc vs $new_rc"; status=1; continue
    fi
    if [ "$old_rc" = 2 ]; then
      if cmp -s "$work/old-$key.err" "$work/new-$key.err"; then echo "refused  $scenario ($runtime)"
      else echo "DIFFERS  $scenario ($runtime): different error"; diff "$work/old-$key.err" "$work/new-$key.err" | head -5; status=1; fi
      continue
    fi
    if diff -r "$work/old/$key" "$work/new/$key" >"$work/diff" && cmp -s "$work/old-$key.out" "$work/new-$key.out"; then
      echo "same     $scenario ($runtime): $(find "$work/new/$key" -type f | wc -l) files"
    else
      echo "DIFFERS  $scenario ($runtime)"; head -20 "$work/diff"; diff "$work/old-$key.out" "$work/new-$key.out" | head -5; status=1
    fi
    rm -rf "$work/old/$key" "$work/new/$key"
  done
done
exit $status
