#!/usr/bin/env python3
"""Self-test of scripts/house-check.py on tiny fake workspaces built in a temporary directory.

Run: python3 -m unittest scripts/test_house_check.py   (or python3 scripts/test_house_check.py)
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("house_check", HERE / "house-check.py")
hc = importlib.util.module_from_spec(_spec)
sys.modules["house_check"] = hc
_spec.loader.exec_module(hc)


def opts(**kw) -> argparse.Namespace:
    base = dict(max_file=600, max_fn=100, max_crate=12000, max_cycle=2, report_only=False,
                verbose=False)
    base.update(kw)
    return argparse.Namespace(**base)


class Workspace:
    """A fake Cargo workspace: crates given as {name: {relative path: source}}."""

    def __init__(self, tmp: Path):
        self.root = tmp

    def write(self, rel: str, text: str) -> None:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"))

    def crate(self, dir_: str, name: str, files: dict[str, str], deps: str = "",
              dev_deps: str = "") -> None:
        self.write(f"{dir_}/Cargo.toml", f"""
            [package]
            name = "{name}"
            version.workspace = true

            [dependencies]
            {deps}

            [dev-dependencies]
            {dev_deps}
            """)
        for rel, text in files.items():
            self.write(f"{dir_}/{rel}", text)

    def manifest(self, members: list[str], ws_deps: str = "") -> None:
        quoted = ", ".join(f'"{m}"' for m in members)
        self.write("Cargo.toml", f"""
            [workspace]
            members = [{quoted}]

            [workspace.package]
            version = "0.1.0"

            [workspace.dependencies]
            {ws_deps}
            """)

    def run(self, **kw) -> tuple[int, str]:
        out = io.StringIO()
        code = hc.run(self.root, opts(**kw), out=out)
        return code, out.getvalue()

    def package(self, name: str):
        pkgs = hc.discover(self.root)
        cache: dict = {}
        for p in pkgs:
            for r in p.roots:
                hc.build_tree(p, r, cache)
        return next(p for p in pkgs if p.name == name)


class HouseCheckTest(unittest.TestCase):
    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory()
        self.ws = Workspace(Path(self._tmp.name))

    def tearDown(self) -> None:
        self._tmp.cleanup()

    # -- lexing and test stripping -----------------------------------------------------------

    def test_strips_test_blocks_with_tricky_braces(self) -> None:
        src = textwrap.dedent('''
            pub fn before() -> &'static str {
                "{ not a brace"
            }

            #[cfg(test)]
            #[allow(clippy::unwrap_used)]
            mod tests {
                fn a() {
                    let s = "}}} \\" }";
                    let r = r#"}} "# }"#;
                    let b = br##"{"##;
                    let c = '}';
                    let d = '\\'';
                    // a } in a line comment
                    /* a } in /* a nested } */ block comment */
                }
            }

            pub fn after<'a>(x: &'a str) -> char {
                let _ = x;
                '{'
            }
            ''').lstrip("\n")
        path = Path(self._tmp.name) / "f.rs"
        path.write_text(src)
        info = hc.parse_file(path)
        self.assertEqual(info.test_ranges, [(5, 17)])
        self.assertEqual(info.nontest_lines, info.total_lines - 13)
        self.assertEqual(sorted(f.name for f in info.fns), ["after", "before"])
        after = next(f for f in info.fns if f.name == "after")
        self.assertEqual(after.lines, 4)

    def test_cfg_test_items_and_test_fns(self) -> None:
        src = textwrap.dedent('''
            pub struct S;
            impl S {
                #[cfg(test)]
                pub(crate) fn len(&self) -> usize { 0 }
                pub fn real(&self) {}
            }
            #[test]
            fn stray_test() {}
            #[cfg(all(test, unix))]
            fn only_test_unix() {}
            #[cfg(not(test))]
            fn not_test() {}
            ''').lstrip("\n")
        path = Path(self._tmp.name) / "g.rs"
        path.write_text(src)
        info = hc.parse_file(path)
        self.assertEqual(sorted(f.name for f in info.fns), ["not_test", "real"])

    def test_cfg_test_mod_file_is_not_read(self) -> None:
        self.ws.manifest(["crates/a"])
        self.ws.crate("crates/a", "routersim-engine", {
            "src/lib.rs": """
                pub mod real;

                #[cfg(test)]
                #[allow(clippy::unwrap_used, reason = "tests")]
                mod helpers;
                """,
            "src/real.rs": "pub fn f() {}\n",
            "src/helpers.rs": "fn big() {\n" + "    let _x = 1;\n" * 700 + "}\n",
        })
        pkg = self.ws.package("routersim-engine")
        self.assertEqual(sorted(p.name for p in pkg.files), ["lib.rs", "real.rs"])
        code, out = self.ws.run()
        self.assertEqual(code, 0, out)
        self.assertNotIn("helpers.rs", out)  # neither counted nor listed as outside the tree

    # -- import circles ----------------------------------------------------------------------

    def test_three_file_circle_through_super(self) -> None:
        self.ws.manifest(["crates/a"])
        self.ws.crate("crates/a", "routersim-engine", {
            "src/lib.rs": "pub mod m;\n",
            "src/m/mod.rs": """
                mod a;
                mod b;
                pub struct Root;
                pub fn make() -> a::A { a::A }
                """,
            "src/m/a.rs": """
                use super::b::B;
                pub struct A;
                pub fn f(_: B) {}
                """,
            "src/m/b.rs": """
                pub struct B(pub super::Root);
                """,
        })
        code, out = self.ws.run()
        self.assertEqual(code, 1, out)
        self.assertIn("routersim-engine: 3 files", out)
        self.assertIn("crates/a/src/m/a.rs -> crates/a/src/m/b.rs   crates/a/src/m/a.rs:1 "
                      "super::b::B", out)
        self.assertIn("crates/a/src/m/b.rs:1 super::Root", out)
        self.assertIn("crates/a/src/m/mod.rs:4 a::A", out)
        code, out = self.ws.run(report_only=True)
        self.assertEqual(code, 0)
        code, out = self.ws.run(max_cycle=3)
        self.assertEqual(code, 0, out)

    def test_reexport_is_followed_and_forms_no_circle(self) -> None:
        # Naively x.rs -> mod.rs (super::Y) -> x.rs and mod.rs -> y.rs: a 3-file circle. Y is
        # only re-exported by mod.rs, so x.rs depends on y.rs; mod.rs -> x.rs, mod.rs -> y.rs.
        self.ws.manifest(["crates/a"])
        self.ws.crate("crates/a", "routersim-engine", {
            "src/lib.rs": """
                pub mod r;
                pub fn use_it() -> crate::r::X { r::X(r::Y) }
                """,
            "src/r/mod.rs": """
                mod x;
                mod y;
                pub use x::X;
                pub(crate) use y::*;
                """,
            "src/r/x.rs": """
                use super::Y;
                pub struct X(pub Y);
                """,
            "src/r/y.rs": "pub struct Y;\n",
        })
        pkg = self.ws.package("routersim-engine")
        edges, _ = hc.file_edges(pkg, hc.Resolver())
        names = {(a.relative_to(pkg.dir / "src").as_posix(),
                  b.relative_to(pkg.dir / "src").as_posix()) for a, b in edges}
        self.assertEqual(names, {("r/x.rs", "r/y.rs"), ("r/mod.rs", "r/x.rs"),
                                 ("r/mod.rs", "r/y.rs"), ("lib.rs", "r/x.rs"),
                                 ("lib.rs", "r/y.rs")})
        code, out = self.ws.run()
        self.assertEqual(code, 0, out)

    def test_use_group_expansion(self) -> None:
        self.ws.manifest(["crates/a"])
        self.ws.crate("crates/a", "routersim-engine", {
            "src/lib.rs": """
                pub mod g;
                pub mod user;
                """,
            "src/g/mod.rs": "pub mod p;\npub mod q;\n",
            "src/g/p.rs": "pub struct P;\n",
            "src/g/q.rs": "pub struct Q1;\npub struct Q2;\n",
            "src/user.rs": """
                use crate::g::{
                    self,
                    p::P,
                    q::{Q1, Q2 as Renamed},
                };
                pub fn f(_: P, _: Q1, _: Renamed) {}
                """,
        })
        pkg = self.ws.package("routersim-engine")
        edges, _ = hc.file_edges(pkg, hc.Resolver())
        got = {(a.name, b.relative_to(pkg.dir / "src").as_posix()): v for (a, b), v in
               edges.items()}
        self.assertEqual(got, {("user.rs", "g/p.rs"): (3, "crate::g::p::P"),
                               ("user.rs", "g/q.rs"): (4, "crate::g::q::Q1")})

    # -- functions ---------------------------------------------------------------------------

    def test_function_of_101_lines(self) -> None:
        body100 = "    let _x = 1;\n" * 98
        body101 = "    let _x = 1;\n" * 99
        self.ws.manifest(["crates/a"])
        self.ws.crate("crates/a", "routersim-engine", {
            "src/lib.rs": (
                "pub fn hundred() {\n" + body100 + "}\n\n"
                "/// Documented.\n#[inline]\npub fn hundred_and_one() {\n" + body101 + "}\n"
            ),
        })
        code, out = self.ws.run()
        self.assertEqual(code, 1, out)
        self.assertIn("[non-test function over 100 lines] 1", out)
        self.assertIn("crates/a/src/lib.rs:104 fn hundred_and_one: 101 lines", out)
        self.assertNotIn("fn hundred:", out)

    # -- crates ------------------------------------------------------------------------------

    def test_upward_dev_dependency_and_oracle_exemption(self) -> None:
        self.ws.manifest(
            ["crates/engine", "crates/report", "crates/oracle", "crates/extra"],
            ws_deps="""
            routersim-engine = { path = "crates/engine" }
            routersim-report = { path = "crates/report" }
            routersim-oracle = { path = "crates/oracle" }
            """,
        )
        self.ws.crate("crates/engine", "routersim-engine", {"src/lib.rs": "pub fn f() {}\n"},
                      dev_deps="routersim-report.workspace = true\n"
                               "routersim-oracle = { workspace = true }")
        self.ws.crate("crates/report", "routersim-report", {"src/lib.rs": "pub fn g() {}\n"},
                      deps='routersim-engine = { path = "../engine" }')
        self.ws.crate("crates/oracle", "routersim-oracle", {"src/lib.rs": "pub fn o() {}\n"},
                      deps="routersim-engine.workspace = true\nroutersim-report.workspace = true")
        self.ws.crate("crates/extra", "routersim-extra", {"src/main.rs": "fn main() {}\n"},
                      deps="routersim-engine.workspace = true")
        code, out = self.ws.run()
        self.assertEqual(code, 1, out)
        self.assertIn("routersim-engine (layer 0) -> routersim-report (layer 1) "
                      "(dev dependency): upward", out)
        self.assertIn("[upward import between crates] 2", out)  # the upward edge + its cycle
        self.assertIn("crate cycle {routersim-engine, routersim-report}", out)
        self.assertNotIn("-> routersim-oracle", out.split("violations:")[1])
        self.assertIn("routersim-extra: not in LAYERS", out)

    def test_normal_dependency_on_dev_only_crate(self) -> None:
        self.ws.manifest(["crates/sim", "crates/oracle"])
        self.ws.crate("crates/oracle", "routersim-oracle", {"src/lib.rs": "pub fn o() {}\n"})
        self.ws.crate("crates/sim", "routersim-sim", {"src/lib.rs": "pub fn s() {}\n"},
                      deps='routersim-oracle = { path = "../oracle" }')
        code, out = self.ws.run()
        self.assertEqual(code, 1, out)
        self.assertIn("routersim-sim -> routersim-oracle (normal dependency): "
                      "routersim-oracle is dev-only", out)

    def test_file_and_crate_size(self) -> None:
        self.ws.manifest(["crates/a"])
        self.ws.crate("crates/a", "routersim-engine", {
            "src/lib.rs": "mod big;\n",
            "src/big.rs": "pub const A: u8 = 1;\n" * 601
            + "#[cfg(test)]\nmod tests {\n" + "    fn t() {}\n" * 50 + "}\n",
        })
        code, out = self.ws.run(max_crate=600)
        self.assertEqual(code, 1, out)
        self.assertIn("crates/a/src/big.rs: 601 non-test lines (654 in all)", out)
        self.assertIn("routersim-engine (crates/a): 602 non-test lines", out)

    def test_cli_exit_codes(self) -> None:
        self.ws.manifest(["crates/a"])
        self.ws.crate("crates/a", "routersim-engine", {
            "src/lib.rs": "pub fn f() {\n" + "    let _x = 1;\n" * 120 + "}\n",
        })
        script = str(HERE / "house-check.py")
        fail = subprocess.run([sys.executable, script, "--root", str(self.ws.root)],
                              capture_output=True, text=True)
        self.assertEqual(fail.returncode, 1, fail.stdout + fail.stderr)
        self.assertIn("house-check: FAIL", fail.stdout)
        ok = subprocess.run([sys.executable, script, "--root", str(self.ws.root),
                             "--report-only"], capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0)
        ok = subprocess.run([sys.executable, script, "--root", str(self.ws.root),
                             "--max-fn", "200"], capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0, ok.stdout)
        self.assertIn("house-check: OK", ok.stdout)


if __name__ == "__main__":
    unittest.main()
