#!/usr/bin/env python3
"""house-check: checks issue 28's architecture rules on a Cargo workspace.

The rules ("Done when" of issue 28), each with its option:

  * no non-test source file over 600 lines                 (--max-file 600)
  * no non-test function over 100 lines                    (--max-fn 100)
  * no import circle of more than 2 files, in any crate    (--max-cycle 2)
  * no crate over 12,000 non-test lines                    (--max-crate 12000)
  * no upward import between crates (the LAYERS table below), and no crate cycle

Why a script: clippy's `too_many_lines` sees one function at a time and cargo only forbids
crate cycles among normal dependencies; nothing else measures files, crates, circles between
files or the direction of crate dependencies, so these would creep back after the split.

How it measures (standard library only; Rust is tokenized, not parsed):

  * Crates: the root Cargo.toml's `[workspace] members` (globs allowed) plus the root package;
    each package's lib (`src/lib.rs` or `[lib] path`) and bins (`src/main.rs`, `[[bin]] path`,
    `src/bin/*`) are walked through their module trees following `mod name;` (`name.rs` or
    `name/mod.rs` as rustc resolves them, `#[path = "..."]` honoured). `tests/`, `benches/`,
    `examples/` are never read; files under `src/` outside every module tree are listed as a
    warning.
  * Test code: any item or statement carrying `#[cfg(test)]` (or `cfg(all(test, ..))`) or a
    test attribute (`#[test]`, `#[tokio::test]`, ...): the attributes' first line through the
    item's end (brace-matched on tokens, so braces in strings, raw strings, chars and comments
    do not count). A `#[cfg(test)] mod x;` file is not read at all. Non-test lines of a file =
    its lines minus the lines of those test items (blank and comment lines count).
  * Functions: every `fn` with a body outside test code (free, methods, trait defaults, nested,
    also the templates inside `macro_rules!`), counted from the line of the `fn` keyword to the
    line of its closing brace inclusive, every line counted (the doc comment and attributes
    above it are not). The report also gives clippy's figure (lines with code on them, as
    `too_many_lines` counts), which is lower.
  * Import circles: a directed graph over a crate's non-test files, A -> B when A names an
    item defined in B through a path: `use` declarations (groups, renames and globs expanded)
    and paths in code (`crate::a::f()`, `super::X`, `child::Y`, `alias::Z` where `alias` was
    imported as a module). A path is walked through the module tree; the segment naming an
    item resolves to the file that defines it (fn, struct, enum, union, trait, type, const,
    static, macro_rules!), and an imported name (`pub use`, private `use`, globs) is followed
    to where it is really defined (re-exports never make the consumer depend on the
    re-exporting `mod.rs`; the re-exporting file itself depends on the child). Naming a module
    alone is not an edge; a glob `use crate::m::*` is an edge to each file defining a name of
    m the importing file mentions (to m's own file when it mentions none). Strongly connected
    components with more than --max-cycle files are reported with one example line per edge.
    Circles of 2 files (allowed) are listed for information.
  * Crates: edges from `[dependencies]`, `[build-dependencies]` and `[dev-dependencies]` (also
    under `[target.*]`) between workspace packages, checked against LAYERS below.

Where it may be imprecise: items created by macros are unknown (a path that ends on one
resolves to the module's file, listed with --verbose); a bare name inside a function that a
`use` in an enclosing block imports is resolved through the `use` itself; names are not split
into the type and value namespaces; `#[cfg(...)]` other than test is ignored (both branches
count); enum variants and associated items resolve to the file defining the enum/type.

Usage: scripts/house-check.py [--root DIR] [--report-only] [--verbose]
                              [--max-file N] [--max-fn N] [--max-crate N] [--max-cycle N]
Exit status: 0 when no rule is broken (or with --report-only), 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import bisect
import glob
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

# ------------------------------------------------------------------------------------------
# The crate layers, bottom first: a crate may depend on crates in lower layers only (or on one
# in its own layer where SAME_LAYER_ALLOWED lists the pair). Edit here as the crates move.
LAYERS: list[list[str]] = [
    ["routersim-primitives", "routersim-engine"],                                         # 0
    ["routersim-runtime", "routersim-config", "routersim-report"],                        # 1
    ["routersim-wire"],                                                                   # 2
    ["routersim-mock-providers"],                                                         # 3
    ["routersim-sim"],                                                                    # 4
    ["routersim-suite", "routersim-live", "routersim-import"],                            # 5
    ["routersim"],  # the CLI                                                             # 6
]

# (dependent, dependency) pairs allowed although both sit in the same layer.
SAME_LAYER_ALLOWED: list[tuple[str, str]] = [
    # The engine stands on its dependency-free building blocks (dates, model-name patterns,
    # inline index sets).
    ("routersim-engine", "routersim-primitives"),
]

# Crates only ever used as dev-dependencies: crate -> the layer it is checked as (it may depend
# on anything below that layer). Any crate may dev-depend on it (those edges are exempt from
# the layer check and from crate cycles); a normal or build dependency on it is a violation.
# Dev-dependencies (test code only) allowed to point upward, each with its reason; printed with
# the report. A normal dependency is never allowed upward.
DEV_UPWARD_ALLOWED: dict[tuple[str, str], str] = {
    ("routersim-engine", "routersim-config"):
        "the engine's rule tests write their routers as LiteLLM YAML, read as users' configs are",
}

DEV_ONLY: dict[str, int] = {
    "routersim-oracle": 6,  # anything below the CLI
}
# ------------------------------------------------------------------------------------------

ITEM_KEYWORDS = {"fn", "struct", "enum", "union", "trait", "type", "const", "static", "mod"}
BRACED_KEYWORDS = {"fn", "mod", "impl", "trait", "struct", "enum", "union", "macro_rules", "extern"}
QUALIFIERS = {"unsafe", "async", "default", "auto", "extern", "const", "safe"}
OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = {")", "]", "}"}


# ------------------------------------------------------------------------------------------
# Lexer


@dataclass(slots=True)
class Tok:
    kind: str  # "id" (identifier or keyword), "life", "lit", "p" (punctuation)
    text: str
    line: int  # 1-based line of the token's first character


_LEX = re.compile(
    r"""
      (?P<ws>\s+)
    | (?P<lc>//[^\n]*)
    | (?P<bc>/\*)
    | (?P<raw>(?:br|cr|r)(?P<hashes>\#*)")
    | (?P<str>[bc]?"(?:[^"\\]|\\.)*")
    | (?P<chr>b?'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]+\}|.)|[^\\'\n])')
    | (?P<life>'(?:r\#)?[^\W\d]\w*)
    | (?P<id>(?:r\#)?[^\W\d]\w*)
    | (?P<num>\d\w*(?:\.\d\w*)?)
    | (?P<p>::|->|=>|\S)
    """,
    re.X | re.S,
)


def lex(src: str) -> list[Tok]:
    """Tokens of Rust source, comments and whitespace dropped, literals as one `lit` token."""
    newlines = [i for i, c in enumerate(src) if c == "\n"]

    def line_of(pos: int) -> int:
        return bisect.bisect_right(newlines, pos - 1) + 1 if newlines else 1

    toks: list[Tok] = []
    pos, n = 0, len(src)
    while pos < n:
        m = _LEX.match(src, pos)
        if m is None:  # an unterminated string: take the rest as one literal
            toks.append(Tok("lit", src[pos:], line_of(pos)))
            break
        kind = m.lastgroup
        if kind == "hashes":
            kind = "raw"
        start = pos
        pos = m.end()
        if kind in ("ws", "lc"):
            continue
        if kind == "bc":  # nested block comments
            depth = 1
            while depth and pos < n:
                nxt_open = src.find("/*", pos)
                nxt_close = src.find("*/", pos)
                if nxt_close < 0:
                    pos = n
                    break
                if 0 <= nxt_open < nxt_close:
                    depth += 1
                    pos = nxt_open + 2
                else:
                    depth -= 1
                    pos = nxt_close + 2
            continue
        if kind == "raw":
            end = src.find('"' + m.group("hashes"), pos)
            pos = n if end < 0 else end + 1 + len(m.group("hashes"))
            toks.append(Tok("lit", src[start:pos], line_of(start)))
            continue
        if kind in ("str", "chr", "num"):
            toks.append(Tok("lit", m.group(), line_of(start)))
            continue
        if kind == "id":
            text = m.group()
            if text.startswith("r#"):
                text = text[2:]
            toks.append(Tok("id", text, line_of(start)))
            continue
        toks.append(Tok(kind, m.group(), line_of(start)))
    return toks


def match_brackets(toks: list[Tok]) -> dict[int, int]:
    """Index of each opening bracket -> index of its closing one (unbalanced ones left out)."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for i, t in enumerate(toks):
        if t.kind != "p":
            continue
        if t.text in OPENERS:
            stack.append(i)
        elif t.text in CLOSERS:
            while stack and OPENERS[toks[stack[-1]].text] != t.text:
                stack.pop()  # tolerate a stray opener
            if stack:
                pairs[stack.pop()] = i
    return pairs


# ------------------------------------------------------------------------------------------
# One file: test items, functions, module-level definitions, `mod` declarations, uses, paths


@dataclass
class UseRec:
    scope: tuple[str, ...]  # inline-module path inside the file
    module_level: bool  # False: inside a function/impl body (block scope)
    segs: tuple[str, ...]
    name: str  # the name it binds (alias or last segment); "*" for a glob
    glob: bool
    line: int
    text: str


@dataclass
class PathRec:
    scope: tuple[str, ...]
    segs: tuple[str, ...]
    line: int
    text: str


@dataclass
class FnRec:
    name: str
    line: int
    end: int
    code_lines: int

    @property
    def lines(self) -> int:
        return self.end - self.line + 1


@dataclass
class ModDecl:
    scope: tuple[str, ...]
    name: str
    path_attr: str | None
    line: int


@dataclass
class FileInfo:
    path: Path
    total_lines: int
    test_ranges: list[tuple[int, int]] = field(default_factory=list)
    whole_file_test: bool = False
    fns: list[FnRec] = field(default_factory=list)
    mod_decls: list[ModDecl] = field(default_factory=list)
    test_mod_decls: list[ModDecl] = field(default_factory=list)
    inline_mods: list[tuple[tuple[str, ...], str]] = field(default_factory=list)
    defs: dict[tuple[str, ...], set[str]] = field(default_factory=dict)
    uses: list[UseRec] = field(default_factory=list)
    paths: list[PathRec] = field(default_factory=list)
    idents: set[str] = field(default_factory=set)

    @property
    def nontest_lines(self) -> int:
        if self.whole_file_test:
            return 0
        covered: set[int] = set()
        for a, b in self.test_ranges:
            covered.update(range(a, b + 1))
        return self.total_lines - len(covered)


def _attr_is_test(body: list[Tok]) -> bool:
    """Whether the tokens inside `#[...]` make the item test-only."""
    texts = [t.text for t in body]
    if not texts:
        return False
    if texts[0] == "cfg" and len(texts) > 2 and texts[1] == "(":
        return _cfg_is_test(texts[2:-1])
    # `#[test]`, `#[tokio::test]`, `#[tokio::test(flavor = ...)]`, `#[bench]`
    path = []
    for t in texts:
        if t == "(":
            break
        path.append(t)
    return bool(path) and path[-1] in ("test", "bench") and all(
        p == "::" or re.fullmatch(r"\w+", p) for p in path
    )


def _cfg_is_test(pred: list[str]) -> bool:
    if pred == ["test"]:
        return True
    if len(pred) > 2 and pred[0] == "all" and pred[1] == "(":
        depth, items, cur = 0, [], []
        for t in pred[2:-1]:
            if t == "(":
                depth += 1
            elif t == ")":
                depth -= 1
            if t == "," and depth == 0:
                items.append(cur)
                cur = []
            else:
                cur.append(t)
        items.append(cur)
        return any(_cfg_is_test(i) for i in items if i)
    return False


def _skip_vis(toks: list[Tok], k: int, pairs: dict[int, int]) -> int:
    if k < len(toks) and toks[k].text == "pub":
        k += 1
        if k < len(toks) and toks[k].text == "(" and k in pairs:
            k = pairs[k] + 1
    return k


def _item_head(toks: list[Tok], k: int, pairs: dict[int, int]) -> int:
    """Index of an item's keyword, after visibility and qualifiers."""
    k = _skip_vis(toks, k, pairs)
    n = len(toks)
    while k < n and toks[k].kind == "id" and toks[k].text in QUALIFIERS:
        nxt = toks[k + 1] if k + 1 < n else None
        if toks[k].text in ("const", "default", "auto", "safe") and not (
            nxt and nxt.text in ("fn", "unsafe", "async", "extern", "impl", "trait", "safe")
        ):
            break  # `const X: ...`, `default` as a name
        k += 1
        if toks[k - 1].text == "extern" and k < n and toks[k].kind == "lit":
            k += 1
    return k


def item_end(toks: list[Tok], start: int, pairs: dict[int, int]) -> int:
    """Index of the last token of the item or statement beginning at `start`."""
    n = len(toks)
    k = _item_head(toks, start, pairs)
    kw = toks[k].text if k < n else ""
    braced = kw in BRACED_KEYWORDS or kw == "{"
    semi_only = kw in ("let", "use", "const", "static", "type")
    field_mode = (
        k < n - 1 and toks[k].kind == "id" and toks[k + 1].text == ":" and not braced
    )
    angle = 0
    m = k
    while m < n:
        t = toks[m]
        if t.kind == "p":
            if t.text in OPENERS:
                if m not in pairs:
                    return n - 1
                if t.text == "{" and braced:
                    return pairs[m]
                m = pairs[m] + 1
                continue
            if t.text in CLOSERS:
                return m - 1
            if t.text == ";":
                return m
            if field_mode and t.text == "<":
                angle += 1
            elif field_mode and t.text == ">":
                angle -= 1
            elif t.text == "," and not braced and not semi_only and angle <= 0:
                return m
        m += 1
    return n - 1


def _code_lines(lines: list[str], first: int, last: int) -> int:
    """Lines with code between two 1-based lines, the way clippy's too_many_lines counts."""
    count, in_comment = 0, False
    for raw in lines[first - 1 : last]:
        line, code = raw, False
        while True:
            line = line.lstrip()
            if not line:
                break
            if in_comment:
                i = line.find("*/")
                if i < 0:
                    break
                line, in_comment = line[i + 2 :], False
                continue
            multi = line.find("/*")
            single = line.find("//")
            multi = len(line) if multi < 0 else multi
            single = len(line) if single < 0 else single
            code |= multi > 0 and single > 0
            if multi < single:
                line, in_comment = line[multi + 2 :], True
                continue
            break
        count += code
    return count


def parse_use_tree(toks: list[Tok], k: int, end: int, prefix: tuple[str, ...]):
    """Leaves of the use tree starting at toks[k] (before `end`): [(segs, name, glob, line)]."""
    segs = list(prefix)
    out = []
    if k < end and toks[k].text == "::":
        segs.append("::")
        k += 1
    while k < end:
        t = toks[k]
        if t.kind == "id":
            segs.append(t.text)
            k += 1
            if k < end and toks[k].text == "::":
                k += 1
                continue
            break
        if t.text == "*":
            out.append((tuple(segs), "*", True, t.line))
            return out, k + 1
        if t.text == "{":
            close = end
            depth = 0
            for j in range(k, end):
                if toks[j].text == "{":
                    depth += 1
                elif toks[j].text == "}":
                    depth -= 1
                    if depth == 0:
                        close = j
                        break
            j = k + 1
            while j < close:
                sub, j = parse_use_tree(toks, j, close, tuple(segs))
                out.extend(sub)
                while j < close and toks[j].text != ",":
                    j += 1
                j += 1
            return out, close + 1
        return out, k + 1  # unexpected token (e.g. a macro's `$crate`): give up on this leaf
    if not segs or segs == list(prefix) and not prefix:
        return out, k
    line = toks[k - 1].line if k - 1 < len(toks) else 0
    name = segs[-1]
    if name == "self" and len(segs) > 1:
        segs.pop()
        name = segs[-1]
    if k < end and toks[k].text == "as" and k + 1 < end:
        name = toks[k + 1].text
        k += 2
    out.append((tuple(segs), name, False, line))
    return out, k


def parse_file(path: Path) -> FileInfo:
    src = path.read_text(encoding="utf-8", errors="replace")
    src_lines = src.split("\n")
    total = src.count("\n") + (0 if src.endswith("\n") or not src else 1)
    info = FileInfo(path=path, total_lines=total)
    toks = lex(src)
    pairs = match_brackets(toks)
    n = len(toks)

    # (scope path, brace depth of its body, index of its closing brace)
    scopes: list[tuple[tuple[str, ...], int, int]] = [((), 0, n)]
    depth = 0
    pending_path: str | None = None
    i = 0
    while i < n:
        t = toks[i]
        scope, scope_depth, _ = scopes[-1]
        module_level = depth == scope_depth

        if t.kind == "p" and t.text == "#" and i + 1 < n:
            # inner attribute `#![...]`
            if toks[i + 1].text == "!" and i + 2 < n and toks[i + 2].text == "[" and i + 2 in pairs:
                close = pairs[i + 2]
                if depth == 0 and not scope and _attr_is_test(toks[i + 3 : close]):
                    info.whole_file_test = True
                i = close + 1
                continue
            if toks[i + 1].text == "[" and i + 1 in pairs:
                j, is_test, path_attr = i, False, None
                while j + 1 < n and toks[j].text == "#" and toks[j + 1].text == "[" and j + 1 in pairs:
                    close = pairs[j + 1]
                    body = toks[j + 2 : close]
                    is_test |= _attr_is_test(body)
                    if len(body) == 3 and body[0].text == "path" and body[1].text == "=":
                        path_attr = _unquote(body[2].text)
                    j = close + 1
                if is_test:
                    end = item_end(toks, j, pairs)
                    k = _skip_vis(toks, j, pairs)
                    if (module_level and k + 2 < n and toks[k].text == "mod"
                            and toks[k + 2].text == ";"):
                        info.test_mod_decls.append(ModDecl(scope, toks[k + 1].text, path_attr,
                                                           toks[k].line))
                    end_line = toks[end].line if end >= j else toks[j - 1].line
                    info.test_ranges.append((t.line, end_line))
                    i = end + 1
                    continue
                pending_path = path_attr
                i = j
                continue

        if t.kind == "p":
            if t.text == "{":
                depth += 1
            elif t.text == "}":
                depth -= 1
                while len(scopes) > 1 and scopes[-1][2] <= i:
                    scopes.pop()
            i += 1
            continue

        if t.kind != "id":
            i += 1
            continue

        info.idents.add(t.text)
        nxt = toks[i + 1] if i + 1 < n else None

        if t.text == "use":
            end = i + 1
            d = 0
            while end < n:
                x = toks[end].text
                if x in ("{", "(", "["):
                    d += 1
                elif x in ("}", ")", "]"):
                    d -= 1
                    if d < 0:
                        break
                elif x == ";" and d == 0:
                    break
                end += 1
            leaves, _ = parse_use_tree(toks, i + 1, end, ())
            for segs, name, is_glob, line in leaves:
                text = "::".join(segs).replace("::::", "::") + ("::*" if is_glob else "")
                info.uses.append(UseRec(scope, module_level, segs, name, is_glob, line, text))
            i = end + 1
            continue

        if t.text == "fn" and nxt is not None and nxt.kind == "id":
            k = i + 2
            while k < n:
                x = toks[k]
                if x.kind == "p" and x.text in ("(", "[") and k in pairs:
                    k = pairs[k] + 1
                    continue
                if x.text in ("{", ";") or x.text in CLOSERS:
                    break
                k += 1
            if k < n and toks[k].text == "{" and k in pairs:
                end_line = toks[pairs[k]].line
                info.fns.append(
                    FnRec(nxt.text, t.line, end_line, _code_lines(src_lines, t.line, end_line))
                )

        if module_level:
            if t.text == "mod" and nxt is not None and nxt.kind == "id" and i + 2 < n:
                after = toks[i + 2].text
                info.defs.setdefault(scope, set()).add(nxt.text)
                if after == ";":
                    info.mod_decls.append(ModDecl(scope, nxt.text, pending_path, t.line))
                elif after == "{" and i + 2 in pairs:
                    info.inline_mods.append((scope, nxt.text))
                    scopes.append((scope + (nxt.text,), depth + 1, pairs[i + 2]))
                pending_path = None
                i += 2
                continue
            name = _defined_name(toks, i)
            if name:
                info.defs.setdefault(scope, set()).add(name)
            if t.text not in ("pub", "crate", "in", "super", "self"):
                pending_path = None

        # a path: `a::b::c` not preceded by `::` (nor by `$`, a macro metavariable)
        if nxt is not None and nxt.text == "::" and i + 2 < n and toks[i + 2].kind == "id":
            prev = toks[i - 1].text if i else ""
            if prev == "::" or (prev == "$" and t.text != "crate"):  # `$crate::` is `crate::`
                i += 1
                continue
            segs = [t.text]
            k = i + 1
            while k + 1 < n and toks[k].text == "::" and toks[k + 1].kind == "id":
                segs.append(toks[k + 1].text)
                k += 2
            info.paths.append(PathRec(scope, tuple(segs), t.line, "::".join(segs)))
            for s in segs:
                info.idents.add(s)
            i = k
            continue
        i += 1
    return info


def _defined_name(toks: list[Tok], i: int) -> str | None:
    """The name an item keyword at toks[i] defines at module level, if any."""
    t = toks[i].text
    n = len(toks)

    def ident(k: int) -> str | None:
        return toks[k].text if k < n and toks[k].kind == "id" else None

    if t == "macro_rules" and i + 2 < n and toks[i + 1].text == "!":
        return ident(i + 2)
    if t not in ITEM_KEYWORDS and t != "union":
        return None
    if t == "mod":
        return None  # handled by the caller
    if t == "static":
        k = i + 1
        if ident(k) == "mut":
            k += 1
        return ident(k)
    if t == "const":
        name = ident(i + 1)
        if name in (None, "fn", "unsafe", "async", "extern", "_"):
            return None
        return name if i + 2 < n and toks[i + 2].text == ":" else None
    if t == "union":
        name = ident(i + 1)
        return name if name and i + 2 < n and toks[i + 2].text in ("{", "<") else None
    if t == "fn":
        return ident(i + 1)
    name = ident(i + 1)  # struct, enum, trait, type
    return name


def _unquote(lit: str) -> str:
    if lit.startswith("r"):
        return lit.lstrip("r").strip("#")[1:-1]
    return lit[1:-1].replace("\\\\", "\\")


# ------------------------------------------------------------------------------------------
# Module trees and path resolution


class Module:
    def __init__(self, crate: "Package", file: Path, scope: tuple[str, ...],
                 parent: "Module | None", mod_dir: Path):
        self.crate = crate
        self.file = file
        self.scope = scope
        self.parent = parent
        self.mod_dir = mod_dir  # where `mod x;` inside it looks for x.rs / x/mod.rs
        self.root: Module = parent.root if parent else self
        self.children: dict[str, Module] = {}
        self.defs: set[str] = set()
        self.uses: dict[str, list[UseRec]] = {}
        self.local_uses: dict[str, list[UseRec]] = {}
        self.globs: list[UseRec] = []
        self.local_globs: list[UseRec] = []

    def __repr__(self) -> str:
        return f"Module({self.file}, {self.scope})"


EXT = ("ext",)


@dataclass
class Package:
    name: str
    dir: Path
    manifest: dict
    roots: list[Path] = field(default_factory=list)
    files: dict[Path, FileInfo] = field(default_factory=dict)
    modules: list[Module] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    test_mod_files: set[Path] = field(default_factory=set)


class Resolver:
    def __init__(self) -> None:
        self.memo: dict[tuple[int, str, bool], tuple | None] = {}
        self.active: set[tuple[int, str, bool]] = set()

    def lookup(self, m: Module, name: str, local: bool = False):
        """What `name` means inside module m: ("mod", M) / ("item", file, name) / EXT / None."""
        key = (id(m), name, local)
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            return None
        self.active.add(key)
        try:
            res = self._lookup(m, name, local)
        finally:
            self.active.discard(key)
        self.memo[key] = res
        return res

    def _lookup(self, m: Module, name: str, local: bool):
        if name in m.children:
            return ("mod", m.children[name])
        if name in m.defs:
            return ("item", m.file, name)
        cands = list(m.local_uses.get(name, ())) if local else []
        cands += m.uses.get(name, ())
        for u in cands:
            r = self.resolve(m, u.segs)
            if r is not None:
                return r
        for g in (m.local_globs if local else []) + m.globs:
            r = self.resolve(m, g.segs)
            if r is not None and r[0] == "mod" and r[1] is not m:
                r2 = self.lookup(r[1], name)
                if r2 is not None:
                    return r2
        return None

    def resolve(self, m: Module, segs: tuple[str, ...], local: bool = False):
        """Walks a path from module m: ("mod", M), ("item", file, name[, "?"]) or EXT."""
        if not segs or segs[0] == "::":
            return EXT
        first, rest = segs[0], list(segs[1:])
        if first == "crate":
            cur = m.root
        elif first == "self":
            cur = m
        elif first == "super":
            cur = m.parent
            if cur is None:
                return EXT
        else:
            r = self.lookup(m, first, local)
            if r is None or r[0] != "mod":
                return r if r is not None else EXT
            cur = r[1]
        for s in rest:
            if s == "super":
                cur = cur.parent or cur
                continue
            if s == "self":
                continue
            r = self.lookup(cur, s)
            if r is None:
                return ("item", cur.file, s, "?")  # unknown (a macro's item?): the module's file
            if r[0] == "mod":
                cur = r[1]
                continue
            return r
        return ("mod", cur)


def child_file(m: Module, decl: ModDecl) -> Path | None:
    if decl.path_attr is not None:
        base = m.file.parent if not m.scope else m.mod_dir
        p = (base / decl.path_attr)
        return p if p.is_file() else None
    for cand in (m.mod_dir / f"{decl.name}.rs", m.mod_dir / decl.name / "mod.rs"):
        if cand.is_file():
            return cand
    return None


def build_tree(pkg: Package, root_file: Path, file_cache: dict[Path, FileInfo]) -> None:
    def info_of(p: Path) -> FileInfo:
        p = p.resolve()
        if p not in file_cache:
            file_cache[p] = parse_file(p)
        return file_cache[p]

    def mark_test(file: Path) -> None:
        """A `#[cfg(test)] mod x;` file and the files below it: not checked, not orphans."""
        if file in pkg.test_mod_files:
            return
        pkg.test_mod_files.add(file)
        info = info_of(file)
        mod_dir = file.parent if file.name == "mod.rs" else file.parent / file.stem
        for decl in info.mod_decls + info.test_mod_decls:
            base = mod_dir.joinpath(*decl.scope)
            for cand in (base / f"{decl.name}.rs", base / decl.name / "mod.rs"):
                if cand.is_file():
                    mark_test(cand.resolve())
                    break

    def load(file: Path, parent: Module | None, name: str, mod_rs: bool) -> Module:
        file = file.resolve()
        info = info_of(file)
        if info.whole_file_test:
            pkg.test_mod_files.add(file)
        else:
            pkg.files[file] = info
        mod_dir = file.parent if mod_rs else file.parent / file.stem
        top = Module(pkg, file, (), parent, mod_dir)
        pkg.modules.append(top)
        if parent is not None:
            parent.children[name] = top
        by_scope = {(): top}
        for scope, child in sorted(info.inline_mods, key=lambda x: len(x[0])):
            owner = by_scope.get(scope)
            if owner is None:
                continue
            sub = Module(pkg, file, scope + (child,), owner, owner.mod_dir / child)
            owner.children[child] = sub
            by_scope[scope + (child,)] = sub
            pkg.modules.append(sub)
        for scope, names in info.defs.items():
            if scope in by_scope:
                by_scope[scope].defs |= names - set(by_scope[scope].children)
        for u in info.uses:
            mod = by_scope.get(u.scope)
            if mod is None:
                continue
            if u.glob:
                (mod.globs if u.module_level else mod.local_globs).append(u)
            elif u.name != "_":
                (mod.uses if u.module_level else mod.local_uses).setdefault(u.name, []).append(u)
        if info.whole_file_test:
            return top
        for decl in info.test_mod_decls:
            owner = by_scope.get(decl.scope)
            target = child_file(owner, decl) if owner is not None else None
            if target is not None:
                mark_test(target.resolve())
        for decl in info.mod_decls:
            owner = by_scope.get(decl.scope)
            if owner is None:
                continue
            target = child_file(owner, decl)
            if target is None:
                pkg.missing.append(f"{file}:{decl.line}: mod {decl.name}; (no file found)")
                continue
            is_mod_rs = decl.path_attr is not None or target.name == "mod.rs"
            owner.defs.discard(decl.name)
            load(target, owner, decl.name, is_mod_rs)
        return top

    load(root_file, None, "", True)


def file_edges(pkg: Package, resolver: Resolver):
    """{(from_file, to_file): (line, path text)} for the package's non-test files; unresolved."""
    edges: dict[tuple[Path, Path], tuple[int, str]] = {}
    unresolved: list[tuple[Path, int, str]] = []
    by_key = {(m.file, m.scope): m for m in pkg.modules}

    def add(a: Path, b: Path, line: int, text: str) -> None:
        if a == b or b not in pkg.files:
            return
        key = (a, b)
        if key not in edges or (line, text) < edges[key]:
            edges[key] = (line, text)

    for file, info in sorted(pkg.files.items()):
        for u in info.uses:
            m = by_key.get((file, u.scope))
            if m is None:
                continue
            r = resolver.resolve(m, u.segs, local=not u.module_level)
            if r is None or r == EXT:
                continue
            if r[0] == "item":
                if len(r) > 3:
                    unresolved.append((file, u.line, u.text))
                add(file, r[1], u.line, u.text)
            elif u.glob:
                g = r[1]
                hit = False
                for ident in sorted(info.idents):
                    r2 = resolver.lookup(g, ident)
                    if r2 is not None and r2[0] == "item":
                        hit = True
                        add(file, r2[1], u.line, f"{u.text} ({ident})")
                if not hit:
                    add(file, g.file, u.line, u.text)
        for p in info.paths:
            m = by_key.get((file, p.scope))
            if m is None:
                continue
            r = resolver.resolve(m, p.segs, local=True)
            if r is None or r == EXT or r[0] != "item":
                continue
            if len(r) > 3:
                unresolved.append((file, p.line, p.text))
            add(file, r[1], p.line, p.text)
    return edges, unresolved


def strongly_connected(nodes: list, edges: dict) -> list[list]:
    """Tarjan's algorithm, iterative; components as sorted lists."""
    succ: dict = {v: [] for v in nodes}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
        succ.setdefault(b, [])
    for v in succ:
        succ[v].sort()
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    comps: list[list] = []
    counter = 0
    for root in sorted(succ):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, pi = work.pop()
            if pi == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            recurse = False
            for j in range(pi, len(succ[v])):
                w = succ[v][j]
                if w not in index:
                    work.append((v, j + 1))
                    work.append((w, 0))
                    recurse = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if recurse:
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return sorted(comps)


# ------------------------------------------------------------------------------------------
# Workspace


def load_toml(path: Path) -> dict:
    with path.open("rb") as f:
        return tomllib.load(f)


def discover(root: Path) -> list[Package]:
    manifest = load_toml(root / "Cargo.toml")
    ws = manifest.get("workspace", {})
    dirs: list[Path] = []
    excluded = {(root / e).resolve() for e in ws.get("exclude", [])}
    for member in ws.get("members", []):
        for d in sorted(glob.glob(str(root / member))) or [str(root / member)]:
            p = Path(d).resolve()
            if p not in excluded and (p / "Cargo.toml").is_file():
                dirs.append(p)
    if "package" in manifest:
        dirs.insert(0, root.resolve())
    pkgs = []
    seen: set[Path] = set()
    for d in dirs:
        if d in seen:
            continue
        seen.add(d)
        man = manifest if d == root.resolve() else load_toml(d / "Cargo.toml")
        name = man.get("package", {}).get("name", d.name)
        pkg = Package(name, d, man)
        lib = man.get("lib", {}).get("path")
        cands = [d / lib] if lib else [d / "src" / "lib.rs"]
        cands.append(d / "src" / "main.rs")
        for b in man.get("bin", []):
            if "path" in b:
                cands.append(d / b["path"])
            elif b.get("name"):
                cands.append(d / "src" / "bin" / f"{b['name']}.rs")
        bindir = d / "src" / "bin"
        if bindir.is_dir():
            cands += sorted(bindir.glob("*.rs")) + sorted(bindir.glob("*/main.rs"))
        for c in cands:
            c = c.resolve()
            if c.is_file() and c not in pkg.roots:
                pkg.roots.append(c)
        pkgs.append(pkg)
    return pkgs


def dependencies(pkg: Package, ws_deps: dict, names: set[str]) -> list[tuple[str, str]]:
    """[(dependency name, kind)] among workspace packages; kind: normal, build or dev."""
    out = set()
    tables = [pkg.manifest, *pkg.manifest.get("target", {}).values()]
    for table in tables:
        for key, kind in (("dependencies", "normal"), ("build-dependencies", "build"),
                          ("dev-dependencies", "dev")):
            for dep, spec in table.get(key, {}).items():
                real = dep
                if isinstance(spec, dict):
                    if spec.get("package"):
                        real = spec["package"]
                    elif spec.get("workspace"):
                        wspec = ws_deps.get(dep)
                        if isinstance(wspec, dict) and wspec.get("package"):
                            real = wspec["package"]
                if real in names and real != pkg.name:
                    out.add((real, kind))
    return sorted(out)


def layer_of(name: str) -> int | None:
    for i, layer in enumerate(LAYERS):
        if name in layer:
            return i
    return DEV_ONLY.get(name)


def check_layers(pkgs: list[Package], deps: dict[str, list[tuple[str, str]]]):
    violations, warnings = [], []
    for p in sorted(pkgs, key=lambda p: p.name):
        if layer_of(p.name) is None:
            warnings.append(f"{p.name}: not in LAYERS (its dependencies are not checked)")
    allowed = set(SAME_LAYER_ALLOWED)
    for a in sorted(deps):
        for b, kind in deps[a]:
            la, lb = layer_of(a), layer_of(b)
            if b in DEV_ONLY:
                if kind != "dev":
                    violations.append(f"{a} -> {b} ({kind} dependency): {b} is dev-only")
                continue
            if la is None or lb is None:
                continue
            if kind == "dev" and (a, b) in DEV_UPWARD_ALLOWED:
                warnings.append(f"{a} -> {b} (dev dependency, allowed): {DEV_UPWARD_ALLOWED[(a, b)]}")
                continue
            if la < lb:
                violations.append(
                    f"{a} (layer {la}) -> {b} (layer {lb}) ({kind} dependency): upward"
                )
            elif la == lb and (a, b) not in allowed:
                violations.append(
                    f"{a} -> {b} ({kind} dependency): same layer {la}, not in SAME_LAYER_ALLOWED"
                )
    # cycles (dev-dependencies on DEV_ONLY crates excluded: cargo allows those by design)
    cedges = {(a, b): kind for a in deps for b, kind in deps[a]
              if not (kind == "dev" and (b in DEV_ONLY or (a, b) in DEV_UPWARD_ALLOWED))}
    for comp in strongly_connected(sorted(deps), cedges):
        if len(comp) > 1:
            inside = ", ".join(f"{a} -> {b} ({k})" for (a, b), k in sorted(cedges.items())
                               if a in comp and b in comp)
            violations.append(f"crate cycle {{{', '.join(comp)}}}: {inside}")
    return violations, warnings


# ------------------------------------------------------------------------------------------
# Report


def rel(p: Path, root: Path) -> str:
    try:
        return str(p.relative_to(root))
    except ValueError:
        return str(p)


def run(root: Path, opts: argparse.Namespace, out=sys.stdout) -> int:
    root = root.resolve()
    if not (root / "Cargo.toml").is_file():
        print(f"house-check: no Cargo.toml in {root}", file=sys.stderr)
        return 2
    pkgs = discover(root)
    names = {p.name for p in pkgs}
    ws_deps = load_toml(root / "Cargo.toml").get("workspace", {}).get("dependencies", {})
    cache: dict[Path, FileInfo] = {}
    for p in pkgs:
        for r in p.roots:
            build_tree(p, r, cache)
    violations: dict[str, list[str]] = {}
    warnings: list[str] = []
    resolver = Resolver()
    rows = []
    cycles_out: list[str] = []
    verbose_out: list[str] = []
    small_cycles: list[str] = []

    def viol(rule: str, text: str) -> None:
        violations.setdefault(rule, []).append(text)

    r_file = f"non-test file over {opts.max_file} lines"
    r_fn = f"non-test function over {opts.max_fn} lines"
    r_cycle = f"import circle of more than {opts.max_cycle} files"
    r_crate = f"crate over {opts.max_crate} non-test lines"
    r_layer = "upward import between crates"

    all_fns = []
    for p in sorted(pkgs, key=lambda p: p.name):
        total = sum(i.nontest_lines for i in p.files.values())
        largest = max(p.files.values(), key=lambda i: (i.nontest_lines, str(i.path)), default=None)
        fns = [(f, path) for path, i in p.files.items() for f in i.fns
               if not _in_ranges(f.line, i.test_ranges)]
        longest = max(fns, key=lambda x: (x[0].lines, str(x[1])), default=None)
        rows.append((p, total, largest, longest))
        if total > opts.max_crate:
            viol(r_crate, f"{p.name} ({rel(p.dir, root) or '.'}): {total} non-test lines")
        for path, i in sorted(p.files.items()):
            if i.nontest_lines > opts.max_file:
                viol(r_file, f"{rel(path, root)}: {i.nontest_lines} non-test lines "
                     f"({i.total_lines} in all)")
        for f, path in fns:
            all_fns.append((rel(path, root), f))
        for line in p.missing:
            warnings.append(line)
        # files under src/ outside every module tree
        src = p.dir / "src"
        if src.is_dir():
            reached = set(p.files) | p.test_mod_files | {
                x for q in pkgs if q is not p for x in list(q.files) + list(q.test_mod_files)}
            for f in sorted(src.rglob("*.rs")):
                if f.resolve() not in reached:
                    warnings.append(f"{rel(f, root)}: under src/ but in no module tree (not checked)")

        edges, unresolved = file_edges(p, resolver)
        for comp in strongly_connected(sorted(p.files), edges):
            if len(comp) < 2:
                continue
            if len(comp) <= opts.max_cycle:
                small_cycles.append(" <-> ".join(rel(f, root) for f in comp))
                continue
            lines = [f"{p.name}: {len(comp)} files"]
            lines += [f"    {rel(f, root)}" for f in comp]
            lines.append("  edges (one example each):")
            cs = set(comp)
            for (a, b), (ln, text) in sorted(edges.items()):
                if a in cs and b in cs:
                    lines.append(f"    {rel(a, root)} -> {rel(b, root)}   "
                                 f"{rel(a, root)}:{ln} {text}")
            viol(r_cycle, "\n".join(lines))
        if opts.verbose:
            for f, ln, text in sorted(set(unresolved)):
                verbose_out.append(f"  {rel(f, root)}:{ln} {text}: last segment not found, "
                                   "taken as the module's file")

    for relpath, f in sorted(all_fns, key=lambda x: (x[0], x[1].line)):
        if f.lines > opts.max_fn:
            viol(r_fn, f"{relpath}:{f.line} fn {f.name}: {f.lines} lines "
                 f"({f.code_lines} with code, clippy's count)")

    deps = {p.name: dependencies(p, ws_deps, names) for p in pkgs}
    lv, lw = check_layers(pkgs, deps)
    for v in lv:
        viol(r_layer, v)
    warnings += lw

    # ---- print
    w = out.write
    w(f"house-check {root}\n\n")
    head = ("crate", "layer", "non-test lines", "files", "largest file", "longest fn")
    table = [head]
    for p, total, largest, longest in rows:
        lay = layer_of(p.name)
        table.append((
            p.name,
            "-" if lay is None else (f"{lay} (dev)" if p.name in DEV_ONLY else str(lay)),
            str(total),
            str(len(p.files)),
            f"{rel(largest.path, root)} ({largest.nontest_lines})" if largest else "-",
            f"{rel(longest[1], root)}:{longest[0].line} {longest[0].name} ({longest[0].lines})"
            if longest else "-",
        ))
    widths = [max(len(r[c]) for r in table) for c in range(len(head))]
    for r in table:
        w("  ".join(c.ljust(widths[k]) if k not in (2, 3) else c.rjust(widths[k])
                    for k, c in enumerate(r)).rstrip() + "\n")
    w("\ndependencies between workspace crates:\n")
    for a in sorted(deps):
        if deps[a]:
            w(f"  {a} -> " + ", ".join(b if k == "normal" else f"{b} ({k})"
                                       for b, k in deps[a]) + "\n")

    rules = [r_file, r_fn, r_cycle, r_crate, r_layer]
    w("\nviolations:\n" if violations else "\nviolations: none\n")
    for rule in rules:
        items = violations.get(rule, [])
        if rule == r_file:
            items = sorted(items)
        if not items:
            continue
        if rule == r_cycle:
            sizes = ", ".join(str(x.split(": ", 1)[1].split(" ")[0]) for x in items)
            w(f"\n[{rule}] {len(items)} (sizes: {sizes})\n")
        else:
            w(f"\n[{rule}] {len(items)}\n")
        for item in items:
            w(f"  {item}\n")
    if small_cycles:
        w(f"\nimport circles of at most {opts.max_cycle} files (allowed):\n")
        for c in sorted(small_cycles):
            w(f"  {c}\n")
    if warnings:
        w("\nwarnings:\n")
        for x in sorted(set(warnings)):
            w(f"  {x}\n")
    if verbose_out:
        w("\nunresolved paths:\n" + "\n".join(verbose_out) + "\n")

    counts = ", ".join(f"{rule}: {len(violations[rule])}" for rule in rules if rule in violations)
    w("\n")
    if violations:
        w(f"house-check: FAIL, {len(violations)} of 5 rules broken ({counts})\n")
        return 0 if opts.report_only else 1
    w("house-check: OK, no rule broken\n")
    return 0


def _in_ranges(line: int, ranges: list[tuple[int, int]]) -> bool:
    return any(a <= line <= b for a, b in ranges)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                    help="workspace root (default: the repository holding this script)")
    ap.add_argument("--report-only", action="store_true", help="always exit 0")
    ap.add_argument("--verbose", action="store_true",
                    help="also list paths whose last segment was not found")
    ap.add_argument("--max-file", type=int, default=600)
    ap.add_argument("--max-fn", type=int, default=100)
    ap.add_argument("--max-crate", type=int, default=12000)
    ap.add_argument("--max-cycle", type=int, default=2)
    opts = ap.parse_args(argv)
    return run(opts.root, opts)


if __name__ == "__main__":
    sys.exit(main())
