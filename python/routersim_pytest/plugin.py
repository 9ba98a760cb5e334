"""`pytest --routersim DIR`: each scenario x seed of `routersim check DIR` as a pytest item.

A Python team's existing `pytest` run (and its junit, HTML or CI reporters) then gates on
routersim without a second tool. The plugin does no simulating of its own: at collection it
runs `routersim check DIR --json` once per directory (the binary this wheel installed, or
`--routersim-bin`) and turns every case of its JSON into an item. An item fails with one line
per failed `expect` line and per golden difference, in routersim's own words; a case that
could not run (a scenario that does not load) fails with routersim's error. A directory that
`check` cannot use at all (missing, no scenarios) is a usage error, as it is for `routersim`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from routersim import find_routersim_bin


def pytest_addoption(parser):
    group = parser.getgroup("routersim", "routersim scenarios as tests")
    group.addoption(
        "--routersim",
        action="append",
        default=[],
        metavar="DIR",
        help="run `routersim check DIR` and collect each scenario x seed as a test "
        "(repeatable)",
    )
    group.addoption(
        "--routersim-seeds",
        default=None,
        metavar="SEEDS",
        help="seeds for every scenario, as `routersim check --seeds` reads them "
        "(`1..5`, `1,2,7`); default: each scenario's own seed",
    )
    group.addoption(
        "--routersim-out",
        default="reports/check",
        metavar="DIR",
        help="where routersim writes each run's report and junit.xml (default reports/check; "
        "a second DIR writes under OUT/2, ...)",
    )
    group.addoption(
        "--routersim-bin",
        default=None,
        metavar="PATH",
        help="the routersim binary (default: the one installed beside this Python, then PATH)",
    )


def routersim_binary(config) -> str:
    """The binary to run: `--routersim-bin`, else the wheel's (`routersim.find_routersim_bin`)."""
    explicit = config.getoption("routersim_bin")
    if explicit:
        return explicit
    try:
        return find_routersim_bin()
    except FileNotFoundError as e:
        raise pytest.UsageError(f"--routersim: {e}, or pass --routersim-bin") from None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    # tryfirst: the items exist before `-k`/`-m` deselect, so those select among them too.
    dirs = config.getoption("routersim")
    if not dirs:
        return
    binary = routersim_binary(config)
    out = Path(config.getoption("routersim_out"))
    for index, directory in enumerate(dirs):
        out_dir = out if index == 0 else out / str(index + 1)
        report = run_check(binary, directory, config.getoption("routersim_seeds"), out_dir)
        for case in report["cases"]:
            items.append(RoutersimCase.from_parent(session, case=case))


def run_check(binary: str, directory: str, seeds: str | None, out_dir: Path) -> dict:
    """`routersim check DIR --json`: its document, or a usage error with routersim's message."""
    command = [binary, "check", directory, "--json", "--out", str(out_dir)]
    if seeds:
        command += ["--seeds", seeds]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    # Exit 0 (all passed), 1 (an expect line or a golden failed) and 2 with cases (one could
    # not run) all print the document; 2 without one is input check could not use at all.
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        message = done.stderr.strip() or f"exit status {done.returncode}"
        raise pytest.UsageError(f"--routersim {directory}: {message}") from None


class RoutersimFailure(Exception):
    """A case that did not pass; its lines are routersim's."""


class RoutersimCase(pytest.Item):
    """One scenario x seed of `routersim check`."""

    def __init__(self, *, case: dict, **kwargs):
        scenario = case["scenario"]
        seed = case["seed"]
        name = f"{scenario}[seed={seed}]" if seed is not None else scenario
        super().__init__(name=name, nodeid=name, path=Path(scenario).resolve(), **kwargs)
        self.case = case
        self.add_marker("routersim")

    def runtest(self):
        lines = failure_lines(self.case)
        if self.case["verdict"] != "pass" or lines:
            raise RoutersimFailure(lines or [f"verdict: {self.case['verdict']}"])

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, RoutersimFailure):
            lines = excinfo.value.args[0]
            verdict = "ERROR" if self.case["verdict"] == "error" else "FAIL"
            head = f"{self.name}: {verdict}"
            if self.case.get("report"):
                head += f" (report: {self.case['report']})"
            return "\n".join([head] + [f"  {line}" for line in lines])
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"routersim {self.name}"


def failure_lines(case: dict) -> list[str]:
    """routersim's own lines: each failed `expect` line, the golden's differences, or the error."""
    return list(case.get("failures") or [])


def pytest_configure(config):
    config.addinivalue_line("markers", "routersim: a routersim scenario x seed (--routersim)")
