#!/usr/bin/env bash
# The routersim GitHub Action's work (action.yml at the repository root runs this script, and
# tests/cli/action.rs runs it here with the same inputs): install routersim, print its version,
# run `routersim check`, publish where junit.xml and the reports are, and exit with routersim's
# own exit code (0 every run passed, 1 an `expect` line or a golden failed, 2 bad input), which
# fails the job. An install that fails exits 2 too, saying so.
#
# Inputs, as action.yml maps them:
#   ROUTERSIM_SCENARIOS  the scenario directory (or one file) to check
#   ROUTERSIM_SEEDS      `--seeds` (`1..5`, `1,2,7`); empty: each scenario's own seed
#   ROUTERSIM_OUT        `--out`: where the reports and junit.xml go
#   ROUTERSIM_ARGS       more `check` arguments, split on spaces (`--strict --tolerance 2%`)
#   ROUTERSIM_INSTALL    what `pip install` gets: `source` (the Action's own checkout,
#                        $GITHUB_ACTION_PATH: maturin builds the wheel with cargo, minutes),
#                        `routersim==0.1.0` (a published wheel), a wheel's path; empty: the
#                        `routersim` already on PATH
#   ROUTERSIM_PYTHON     the Python that makes the venv for it (default python3)
# Outputs: `exit-code`, `junit` and `reports` in $GITHUB_OUTPUT, the venv's bin in $GITHUB_PATH
# (later steps find `routersim`), the check's table in $GITHUB_STEP_SUMMARY, each when set.
set -uo pipefail

scenarios=${ROUTERSIM_SCENARIOS:?the scenarios input is required}
out=${ROUTERSIM_OUT:-reports/check}
install=${ROUTERSIM_INSTALL:-}
python=${ROUTERSIM_PYTHON:-python3}

if [ "$install" = source ]; then install=${GITHUB_ACTION_PATH:?source installs need GITHUB_ACTION_PATH}; fi
if [ -n "$install" ]; then
  venv="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/routersim-venv"
  echo "::group::pip install $install"
  if ! { "$python" -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check "$install"; }; then
    echo "::endgroup::"
    echo "error: could not install routersim with pip install $install" >&2
    exit 2
  fi
  echo "::endgroup::"
  export PATH="$venv/bin:$PATH"
  if [ -n "${GITHUB_PATH:-}" ]; then echo "$venv/bin" >>"$GITHUB_PATH"; fi
fi
if ! command -v routersim >/dev/null 2>&1; then
  echo "error: no routersim on PATH (set the install input, e.g. install: routersim)" >&2
  exit 2
fi
routersim --version

args=(check "$scenarios" --out "$out")
if [ -n "${ROUTERSIM_SEEDS:-}" ]; then args+=(--seeds "$ROUTERSIM_SEEDS"); fi
# Word splitting on purpose: extra arguments as one input line.
# shellcheck disable=SC2206
if [ -n "${ROUTERSIM_ARGS:-}" ]; then args+=($ROUTERSIM_ARGS); fi
echo "routersim ${args[*]}"
table="$(mktemp)"
routersim "${args[@]}" | tee "$table"
code=${PIPESTATUS[0]}

if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "exit-code=$code"
    echo "junit=$out/junit.xml"
    echo "reports=$out"
  } >>"$GITHUB_OUTPUT"
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  {
    echo "### routersim check $scenarios"
    echo '```text'
    cat "$table"
    echo '```'
  } >>"$GITHUB_STEP_SUMMARY"
fi
rm -f "$table"
exit "$code"
