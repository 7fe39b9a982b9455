#!/usr/bin/env python3
"""Writes docs/OPERATORS.md from the sources, so that the table cannot rot.

    gen_operators_doc.py                  regenerate docs/OPERATORS.md
    gen_operators_doc.py --check          exit 1 with a diff if it is stale
    gen_operators_doc.py --zoo DIR        where the zoo fixtures are
                                          (default ~/.cache/hybridinfer/fixtures/zoo)

What it reads:
  kernels/ops.def            the ops: id, family, canonical name, aliases
  core/ops/*.c               each family's parse function (hy_opdef_<family>
                             .parse), followed into the local helpers it
                             calls, for the attribute keys and defaults
  kernels/cpu/, kernels/cuda/  hy_cpu_<family> / hy_cuda_<family> definitions
  tests/fixtures/            conformance cases (case.json "op") and the seed
                             and legacy models (model-symbol.json)
  tests/unit/*.c             unit tests that name an op
  the zoo fixtures           which ops the zoo models use

The zoo fixtures live in a cache, not in git, so their section of the
document is kept as committed when the cache is absent, and --check does
not compare it then: a fresh clone passes the check.

Plain Python 3, standard library only.
"""

import argparse
import difflib
import json
import os
import re
import sys
from collections import OrderedDict
from pathlib import Path

DOC_PATH = Path("docs") / "OPERATORS.md"
ZOO_BEGIN = "<!-- zoo:begin -->"
ZOO_END = "<!-- zoo:end -->"
DEFAULT_ZOO = Path.home() / ".cache" / "hybridinfer" / "fixtures" / "zoo"


# ---- ops.def -----------------------------------------------------------------

class Op:
    def __init__(self, ident, family, name, aliases, section):
        self.ident = ident
        self.family = family
        self.name = name
        self.aliases = aliases
        self.section = section

    def names(self):
        return [self.name] + self.aliases


def read_ops_def(root):
    """The ops in ops.def order; each carries the heading of the comment
    block above it ("Softmax family", "Reductions", ...)."""
    text = (root / "kernels" / "ops.def").read_text()
    ops = []
    section = "Operators"
    token = re.compile(r"/\*(.*?)\*/|^HY_OP(?:_KNOWN|_CPU)?\s*\((.*?)\)\s*$",
                       re.S | re.M)
    for m in token.finditer(text):
        if m.group(1) is not None:
            first = m.group(1).strip().lstrip("*").strip().splitlines()[0]
            # "Detection (GluonCV ...): listed so ..." -> "Detection"
            section = re.split(r"[(:]", first)[0].strip() or section
            continue
        fields = [f.strip() for f in m.group(2).split(",", 3)]
        ident, family, name, aliases = fields
        name = name.strip('"')
        aliases = [a for a in aliases.strip().strip('"').split(",") if a]
        ops.append(Op(ident, family, name, aliases, section))
    return ops


# ---- reading C -------------------------------------------------------------

class CSource:
    """A C file with comments removed.  `mask` is the same text with the
    inside of string and char literals blanked, so that brackets, commas and
    semicolons can be found by position without tripping over literals."""

    def __init__(self, path, text=None):
        self.path = path
        raw = path.read_text() if text is None else text
        out, mask = [], []
        i, n = 0, len(raw)
        while i < n:
            c = raw[i]
            if raw.startswith("/*", i):
                j = raw.find("*/", i + 2)
                j = n if j < 0 else j + 2
                blank = re.sub(r"[^\n]", " ", raw[i:j])
                out.append(blank)
                mask.append(blank)
                i = j
            elif raw.startswith("//", i):
                j = raw.find("\n", i)
                j = n if j < 0 else j
                out.append(" " * (j - i))
                mask.append(" " * (j - i))
                i = j
            elif c in "\"'":
                j = i + 1
                while j < n and raw[j] != c:
                    j += 2 if raw[j] == "\\" else 1
                j = min(j + 1, n)
                out.append(raw[i:j])
                mask.append(c + "_" * (j - i - 2) + c)
                i = j
            else:
                out.append(c)
                mask.append(c)
                i += 1
        self.text = "".join(out)
        self.mask = "".join(mask)


def close_of(mask, open_at):
    """Index of the bracket closing the one at open_at."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    depth = 0
    for i in range(open_at, len(mask)):
        c = mask[i]
        if c in pairs:
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return len(mask) - 1


def split_top(text, mask, sep=","):
    """Splits text at `sep` characters outside brackets and literals."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(mask):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append((text[start:i], mask[start:i]))
            start = i + 1
    parts.append((text[start:], mask[start:]))
    return parts


C_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do",
              "else", "case", "G_N_ELEMENTS", "MAX", "MIN"}


class Function:
    def __init__(self, name, params, body, body_mask, source):
        self.name = name
        self.params = params
        self.body = body
        self.body_mask = body_mask
        self.source = source


def find_functions(src):
    """Function definitions at file scope: NAME (params) { body }."""
    found = {}
    depth = 0
    call = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
    pos = 0
    for m in call.finditer(src.mask):
        # Brace depth at m.start(), counted incrementally.
        depth += src.mask.count("{", pos, m.start())
        depth -= src.mask.count("}", pos, m.start())
        pos = m.start()
        if depth != 0 or m.group(1) in C_KEYWORDS:
            continue
        close = close_of(src.mask, m.end() - 1)
        after = re.match(r"\s*\{", src.mask[close + 1:])
        if not after:
            continue
        body_open = close + 1 + after.end() - 1
        body_close = close_of(src.mask, body_open)
        params = []
        ptext = src.text[m.end():close]
        for p, _ in split_top(ptext, src.mask[m.end():close]):
            pm = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", p.strip())
            if pm and pm.group(1) != "void":
                params.append(pm.group(1))
        found[m.group(1)] = Function(
            m.group(1), params, src.text[body_open + 1:body_close],
            src.mask[body_open + 1:body_close], src)
    return found


def read_constants(paths):
    """#define NAME <number> and enum constants, as text."""
    consts = {}
    for path in paths:
        src = CSource(path)
        for m in re.finditer(r"^\s*#\s*define\s+(\w+)\s+(\S[^\n]*?)\s*$",
                             src.text, re.M):
            consts[m.group(1)] = m.group(2)
        for m in re.finditer(r"\benum\b[^{;]*\{", src.mask):
            close = close_of(src.mask, m.end() - 1)
            value = -1
            body = src.text[m.end():close]
            for item, _ in split_top(body, src.mask[m.end():close]):
                im = re.match(r"\s*(\w+)\s*(?:=\s*(-?\d+))?\s*$", item)
                if not im:
                    continue
                value = int(im.group(2)) if im.group(2) else value + 1
                consts[im.group(1)] = str(value)
    return consts


# ---- attributes --------------------------------------------------------------

class Attr:
    def __init__(self, key):
        self.key = key
        self.kind = None           # int, float, bool, tuple, enum, dtype, ...
        self.default = None        # text, as the doc prints it
        self.choices = None
        self.required = None       # "required" or "required unless ..."
        self.accepts_none = False
        self.tuple_none = False    # entries may be "None"
        self.placed = False        # ordered where its value is read

    def understood(self):
        """Whether the doc can say what the parser does without the key."""
        return self.required or self.accepts_none or self.default is not None \
            or self.kind in (None, "string")


class AttrTable:
    """Attributes per op id, in the order the parser reads their values
    (a presence or "None" test may come earlier: `stop` before `start`)."""

    def __init__(self, op_ids):
        self.by_op = {op: OrderedDict() for op in op_ids}
        self.unreadable = False

    def get(self, ops, key, reads_value=False):
        found = []
        for op in ops:
            a = self.by_op[op].setdefault(key, Attr(key))
            if reads_value and not a.placed:
                self.by_op[op].move_to_end(key)
                a.placed = True
            found.append(a)
        return found


# Getter name -> (kind, index of the default argument or None).
GETTERS = {
    "hy_attr_int": ("int", 2),
    "hy_attr_opt_int": ("int", None),
    "hy_attr_float": ("float", 2),
    "hy_attr_bool": ("bool", 2),
    "hy_attr_tuple": ("tuple", None),
    # The default is a string, written as MXNet's docs print it: "(1.0,)".
    "hy_attr_float_tuple": ("tuple of numbers", 2),
    "hy_attr_enum": ("enum", 3),
    "hy_attr_dtype": ("dtype", 2),
    "hy_attr_string": ("string", None),
    "hy_attr_has": (None, None),
}

# Stronger evidence of an attribute's type wins when one key is read twice
# (a presence or "None" check, then the real getter).
KIND_RANK = {None: 0, "string": 1, "bool": 2, "int": 3, "float": 3,
             "tuple": 4, "tuple of numbers": 4, "dtype": 5, "enum": 5}

# Helpers whose defaults depend on the kernel's rank, which reading their
# bodies cannot show: (key argument, kind, default made from the args).
KNOWN_HELPERS = {
    "hy_nn_spatial_attr": (1, "tuple", lambda a: "%s per kernel axis" % a[4]),
}

REQUIRED_MSG = re.compile(
    r"attribute '(\w+|%s)' (?:\([^)]*\) )?is required(.*)$", re.S)


class FamilyReader:
    """Reads one family's attributes out of its parse function, following
    the local helpers it calls (binding their parameters to the call's
    arguments) and splitting on `p->op == HY_OP_X` early returns, which is
    how families give their members different attributes."""

    def __init__(self, functions, consts, table):
        self.functions = functions
        self.consts = consts
        self.table = table

    # -- values --

    def resolve(self, expr, bindings):
        expr = expr.strip()
        seen = set()
        while expr in bindings and expr not in seen:
            seen.add(expr)
            expr = bindings[expr].strip()
        return expr

    def constant(self, expr):
        """A literal, a #define or an enum constant, else None."""
        seen = set()
        while re.fullmatch(r"[A-Za-z_]\w*", expr) and expr in self.consts \
                and expr not in seen:
            seen.add(expr)
            expr = self.consts[expr].strip()
        expr = re.sub(r"^\((.*)\)$", r"\1", expr)
        if expr in ("TRUE", "FALSE"):
            return "True" if expr == "TRUE" else "False"
        if re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?[fF]?", expr):
            return expr.rstrip("fF")
        return None

    def choices(self, array, fn):
        """The strings of a NULL-terminated `static const char *const
        array[] = { ... }`, looked for in the function, then the file."""
        for text in (fn.body, fn.source.text):
            m = re.search(r"\b%s\s*\[\s*\]\s*=\s*\{([^}]*)\}" % re.escape(array),
                          text)
            if m:
                return re.findall(r'"([^"]*)"', m.group(1))
        return None

    # -- walking code --

    def walk_function(self, fn, bindings, ops, stack):
        """A parse function's top level: statements, with op splits."""
        body, mask = fn.body, fn.body_mask
        i, n = 0, len(mask)
        ops = list(ops)
        while i < n:
            while i < n and mask[i].isspace():
                i += 1
            if i >= n:
                break
            m = re.match(r"if\s*\(", mask[i:])
            if m:
                cond_open = i + m.end() - 1
                cond_close = close_of(mask, cond_open)
                branch_start = cond_close + 1
                branch_end = self.statement_end(mask, branch_start)
                has_else = re.match(r"\s*else\b", mask[branch_end:])
                split = None if has_else else self.op_condition(
                    body[cond_open + 1:cond_close])
                if split is None:
                    end = branch_end
                    while True:
                        em = re.match(r"\s*else\b", mask[end:])
                        if not em:
                            break
                        end = self.statement_end(mask, end + em.end())
                    self.scan(fn, body[i:end], mask[i:end], bindings, ops, stack)
                    i = end
                    continue
                negate, named = split
                inside = [o for o in ops if (o in named) != negate]
                branch = body[branch_start:branch_end]
                self.scan(fn, branch, mask[branch_start:branch_end],
                          bindings, inside, stack)
                if re.search(r"\breturn\b", mask[branch_start:branch_end]):
                    ops = [o for o in ops if o not in inside]
                i = branch_end
                continue
            end = self.statement_end(mask, i)
            self.scan(fn, body[i:end], mask[i:end], bindings, ops, stack)
            i = end

    @staticmethod
    def statement_end(mask, start):
        """End of the statement or block starting at `start`."""
        i = start
        while i < len(mask) and mask[i].isspace():
            i += 1
        if i < len(mask) and mask[i] == "{":
            return close_of(mask, i) + 1
        depth = 0
        for j in range(i, len(mask)):
            c = mask[j]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif c == ";" and depth == 0:
                return j + 1
        return len(mask)

    def op_condition(self, cond):
        """(negated, {op idents}) for `p->op == HY_OP_A || p->op == HY_OP_B`
        or `p->op != HY_OP_A`; None for any other condition."""
        terms = re.findall(r"\w+\s*->\s*op\s*(==|!=)\s*HY_OP_(\w+)", cond)
        if not terms:
            return None
        rest = re.sub(r"\w+\s*->\s*op\s*(==|!=)\s*HY_OP_\w+", "", cond)
        if rest.replace("||", "").strip("() \t\n"):
            return None
        kinds = {t[0] for t in terms}
        if kinds == {"=="}:
            return False, {t[1] for t in terms}
        if kinds == {"!="} and len(terms) == 1:
            return True, {terms[0][1]}
        return None

    def scan(self, fn, text, mask, bindings, ops, stack):
        """Every getter, helper call and "is required" message in a piece of
        code, attributed to `ops`."""
        if not ops:
            return
        errors = []
        for m in re.finditer(r"\bg_set_error\s*\(", mask):
            close = close_of(mask, m.end() - 1)
            errors.append((m.start(), close))
            self.required_message(text[m.end():close], mask[m.end():close],
                                  bindings, ops)
        none_checked = self.none_checked(fn)
        for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", mask):
            name = m.group(1)
            if any(a <= m.start() <= b for a, b in errors):
                continue
            close = close_of(mask, m.end() - 1)
            args = [self.resolve(a, bindings) for a, _ in
                    split_top(text[m.end():close], mask[m.end():close])]
            if name in GETTERS:
                self.getter(fn, name, args, text, m.start(), none_checked, ops)
            elif name in KNOWN_HELPERS:
                key_at, kind, default = KNOWN_HELPERS[name]
                key = self.key_of(args, key_at)
                if key:
                    for a in self.table.get(ops, key, reads_value=True):
                        self.merge(a, kind, default(args))
            elif name in self.functions and name not in stack:
                callee = self.functions[name]
                inner = dict(zip(callee.params, args))
                self.walk_plain(callee, inner, ops, stack + [name])

    @staticmethod
    def none_checked(fn):
        """Whether fn compares a value with "None" outside its error
        messages: then the keys it reads as strings accept None."""
        text = fn.body
        for m in reversed(list(re.finditer(r"\bg_set_error\s*\(",
                                           fn.body_mask))):
            close = close_of(fn.body_mask, m.end() - 1)
            text = text[:m.start()] + text[close + 1:]
        return '"None"' in text

    def walk_plain(self, fn, bindings, ops, stack):
        self.scan(fn, fn.body, fn.body_mask, bindings, ops, stack)

    def key_of(self, args, at):
        if len(args) > at and re.fullmatch(r'"[^"]*"', args[at]):
            return args[at][1:-1]
        self.table.unreadable = True
        return None

    def getter(self, fn, name, args, text, at, none_checked, ops):
        kind, default_at = GETTERS[name]
        key = self.key_of(args, 1)
        if key is None:
            return
        # A getter that runs only after a "None" test (`!is_none && get ()`)
        # has None as its real default.
        start = max(text.rfind(c, 0, at) for c in ";{}") + 1
        guarded = re.search(r"(?is)none\b[^|;]*&&\s*!?\s*$", text[start:at])
        default, choices = None, None
        if default_at is not None and len(args) > default_at:
            raw = args[default_at]
            if kind == "enum":
                choices = self.choices(args[2], fn)
                index = self.constant(raw)
                if choices and index is not None and index.isdigit() \
                        and int(index) < len(choices):
                    default = choices[int(index)]
            elif kind == "dtype":
                dm = re.fullmatch(r"HY_DTYPE_(\w+)", raw)
                default = dm.group(1).lower() if dm else None
            elif re.fullmatch(r'"[^"]*"', raw):
                default = raw[1:-1]
            else:
                default = self.constant(raw)
        elif kind == "tuple":
            default = "()"
        reads_value = name not in ("hy_attr_has", "hy_attr_string")
        for a in self.table.get(ops, key, reads_value):
            if name == "hy_attr_opt_int" or guarded \
                    or (name == "hy_attr_string" and none_checked):
                a.accepts_none = True
            if name == "hy_attr_tuple" and len(args) > 3 \
                    and args[3] == "TRUE":
                a.tuple_none = True
            self.merge(a, kind, default, choices)

    @staticmethod
    def merge(a, kind, default, choices=None):
        if KIND_RANK.get(kind, 0) >= KIND_RANK.get(a.kind, 0):
            a.kind = kind
            if choices:
                a.choices = choices
            if default is not None:
                a.default = default

    def required_message(self, text, mask, bindings, ops):
        args = split_top(text, mask)
        if len(args) < 4:
            return
        fmt = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', args[3][0]))
        m = REQUIRED_MSG.search(fmt)
        if not m:
            return
        key = m.group(1)
        if key == "%s":
            n_before = len(re.findall(r"%[^%]", fmt[:m.start(1)]))
            value = self.resolve(args[4 + n_before][0], bindings) \
                if len(args) > 4 + n_before else ""
            if not re.fullmatch(r'"[^"]*"', value):
                return
            key = value[1:-1]
        qualifier = m.group(2).strip().rstrip(".;")
        required = "required"
        if re.match(r"(unless|for)\b", qualifier):
            required += " " + qualifier
        for a in self.table.get(ops, key):
            a.required = required


def read_attributes(root, ops, consts):
    """{op ident: [Attr]}, and {family: (its file, whether every key and
    default could be read)} for the families that have an op definition."""
    families = OrderedDict()
    for op in ops:
        families.setdefault(op.family, []).append(op)
    sources = sorted((root / "core" / "ops").glob("*.c"))
    attrs = {op.ident: [] for op in ops}
    info = {}
    for path in sources:
        src = CSource(path)
        # The shared attribute helpers (hy_attr_require, …) first, so a
        # family file's own helpers of the same name win.
        functions = dict(find_functions(CSource(root / "core" / "attrs.c")))
        # As the compiler finds them: beside the file, else from the top.
        for inc in re.findall(r'#\s*include\s+"([^"]+)"', src.text):
            local = next((p for p in (path.parent / inc, root / inc)
                          if p.exists()), None)
            if local:
                functions.update(find_functions(CSource(local)))
        functions.update(find_functions(src))
        for m in re.finditer(
                r"\bconst\s+hy_op_def\s+hy_opdef_(\w+)\s*=\s*\{", src.mask):
            family = m.group(1)
            close = close_of(src.mask, m.end() - 1)
            pm = re.search(r"\.parse\s*=\s*(\w+)", src.text[m.end():close])
            members = families.get(family, [])
            table = AttrTable([o.ident for o in members])
            if pm and pm.group(1) in functions:
                reader = FamilyReader(functions, consts, table)
                reader.walk_function(functions[pm.group(1)], {},
                                     [o.ident for o in members],
                                     [pm.group(1)])
            elif pm:
                table.unreadable = True
            for o in members:
                attrs[o.ident] = list(table.by_op[o.ident].values())
            readable = not table.unreadable and all(
                a.understood() for o in members for a in attrs[o.ident])
            info[family] = (path.relative_to(root).as_posix(), readable)
    return attrs, info


# ---- kernels -----------------------------------------------------------------

def kernel_families(directory, prefix):
    """Families with a `<prefix><family> (...) { ... }` definition."""
    found = set()
    if not directory.is_dir():
        return found
    for path in sorted(directory.rglob("*")):
        if path.suffix not in (".c", ".cu", ".cpp", ".cc"):
            continue
        src = CSource(path)
        for name in find_functions(src):
            if name.startswith(prefix):
                found.add(name[len(prefix):])
    return found


# ---- tests -------------------------------------------------------------------

def canonical_index(ops):
    index = {}
    for op in ops:
        for n in op.names():
            index.setdefault(n, op.ident)
    return index


def read_case(case_dir):
    try:
        return json.loads((case_dir / "case.json").read_text())
    except (OSError, ValueError):
        return None


def symbol_ops(case_dir, index):
    """Op idents used by a fixture's model-symbol.json."""
    try:
        graph = json.loads((case_dir / "model-symbol.json").read_text())
    except (OSError, ValueError):
        return set()
    return {index[n["op"]] for n in graph.get("nodes", [])
            if n.get("op") in index}


def read_fixtures(root, index):
    """(conformance cases per op, seed/legacy fixtures per op)."""
    conformance, models = {}, {}
    fixtures = root / "tests" / "fixtures"
    if not fixtures.is_dir():
        return conformance, models
    for case_dir in sorted(p for p in fixtures.iterdir() if p.is_dir()):
        case = read_case(case_dir)
        if not case:
            continue
        name = case.get("name", case_dir.name)
        if case.get("kind") == "op":
            ident = index.get(case.get("op"))
            if ident:
                conformance.setdefault(ident, []).append(name)
        else:
            for ident in symbol_ops(case_dir, index):
                models.setdefault(ident, []).append(name)
    return conformance, models


def read_zoo(zoo_dir, index):
    """{op ident: [model]} and the models, or None without the fixtures."""
    if not zoo_dir or not zoo_dir.is_dir():
        return None
    uses, models = {}, set()
    for case_dir in sorted(p for p in zoo_dir.iterdir() if p.is_dir()):
        if not read_case(case_dir):
            continue                # incomplete: case.json is written last
        model = re.sub(r"_b\d+$", "", re.sub(r"^zoo_", "", case_dir.name))
        models.add(model)
        for ident in symbol_ops(case_dir, index):
            uses.setdefault(ident, set()).add(model)
    if not models:
        return None
    return {k: sorted(v) for k, v in uses.items()}, sorted(models)


def read_unit_tests(root, ops, attr_keys):
    """{op ident: [test file stem]}.  A test names an op by its id
    (HY_OP_X), as the "op" of a JSON node, as the first argument of a call
    (parse ("Pooling", ...)), or in an array of op names (ops[] = {...});
    a name that is an attribute key followed by its value ("flatten",
    "False") is an attribute, not an op."""
    found = {}
    unit = root / "tests" / "unit"
    if not unit.is_dir():
        return found
    by_name = {}
    for op in ops:
        for n in op.names():
            by_name.setdefault(n, op.ident)
    idents = {op.ident for op in ops}
    for path in sorted(unit.glob("*.c")):
        src = CSource(path)
        named = set()
        for m in re.finditer(r"\bHY_OP_(\w+)\b", src.text):
            if m.group(1) in idents:
                named.add(m.group(1))
        for m in re.finditer(
                r"""\\?["']op\\?["']\s*:\s*\\?["']([^"'\\]+)\\?["']""",
                src.text):
            if m.group(1) in by_name:
                named.add(by_name[m.group(1)])
        for m in re.finditer(r'\b\w+\s*\(\s*"([^"]+)"\s*(,\s*")?', src.text):
            if m.group(1) in by_name and not (
                    m.group(2) and m.group(1) in attr_keys):
                named.add(by_name[m.group(1)])
        for m in re.finditer(r"\b(\w+)\s*\[\s*\]\s*=\s*\{([^}]*)\}", src.text):
            if {"op", "ops"} & set(m.group(1).lower().split("_")):
                for s in re.findall(r'"([^"]+)"', m.group(2)):
                    if s in by_name:
                        named.add(by_name[s])
        for ident in named:
            found.setdefault(ident, []).append(path.stem)
    return found


# ---- rendering ---------------------------------------------------------------

def md_escape(text):
    return text.replace("|", "\\|")


def render_attr(a):
    kind = a.kind or "value"
    if a.tuple_none:
        kind = "tuple, entries may be None"
    if a.required:
        text = "`%s` (%s, %s)" % (a.key, kind, a.required)
    elif a.accepts_none and a.kind == "int" and a.default is not None:
        # An int read with its default after a None test (topk's axis:
        # -1, or None to flatten).
        text = "`%s`=`%s` (%s or None)" % (a.key, a.default, kind)
    elif a.accepts_none:
        text = "`%s`=`None` (%s or None)" % (a.key, kind)
    elif a.default is not None:
        text = "`%s`=`%s`" % (a.key, a.default)
    else:
        text = "`%s` (%s)" % (a.key, kind)
    if a.choices:
        text += " of %s" % ", ".join(a.choices)
    return md_escape(text)


def render_cases(names, op, all_cases):
    if len(names) == 1:
        return "`%s`" % names[0]
    prefix = "op_" + op.name
    if all(n == prefix or n.startswith(prefix + "_") for n in names):
        # The glob must not also match another op's cases.
        glob_hits = [n for n in all_cases
                     if n == prefix or n.startswith(prefix + "_")]
        if len(glob_hits) == len(names):
            return "`%s*` (%d)" % (prefix, len(names))
    shown = ", ".join("`%s`" % n for n in names[:3])
    more = " +%d more" % (len(names) - 3) if len(names) > 3 else ""
    return "%s%s (%d)" % (shown, more, len(names))


HEADER = """\
# Operators

<!-- Generated by tools/gen_operators_doc.py; edit the sources, not this file. -->

Every op hybridinfer knows, one row each, generated from the sources by
`tools/gen_operators_doc.py` so that it cannot drift from them.  Do not edit
it by hand: change the code, then regenerate.

```sh
python3 tools/gen_operators_doc.py          # rewrite docs/OPERATORS.md
python3 tools/gen_operators_doc.py --check  # exit 1 with a diff if stale (meson test operators-doc)
```

Where each column comes from:

- **Op**, **Aliases**: `kernels/ops.def`.  The canonical name is MXNet
  1.9.1's and is what hybridinfer writes back; an alias is read as the same op.
- **Attributes**: the keys the op's parse function in `core/ops/*.c` reads,
  with the value it uses when the key is absent, which is MXNet 1.9.1's
  default.  `key`=`value`: optional, with that default; `(…, required)`: the
  op is refused without it; `` `key`=`None` ``: MXNet's "None" (an empty
  optional), also accepted as a value; `of a, b, c`: the accepted values.
  Keys not listed are not read: hybridinfer ignores them (training-only
  settings, for instance).  "none": the op reads no attributes; "see
  `core/ops/…`": some of its keys could not be read automatically.
- **CPU**, **GPU**: `yes` when the family has a `hy_cpu_<family>` kernel in
  `kernels/cpu/` (`hy_cuda_<family>` in `kernels/cuda/`), `no` when it
  has none on that backend.  `not yet`: the name is known (the loader names
  it in its error) but the op has no implementation at all.
- **Tested by**:
  - *conformance*: cases in `tests/fixtures/` whose `case.json` has this
    `"op"`: single-op graphs whose outputs were computed by real MXNet
    1.9.1 (`tests/conformance/gen_fixtures.py`), compared by
    `build/tests/test-conformance` (max error 1e-4 · max(1, max|mxnet|));
  - *models*: the seed and legacy-format fixtures in `tests/fixtures/` whose
    `model-symbol.json` uses the op (also compared against MXNet);
  - *unit*: the files in `tests/unit/` that name the op (its id `HY_OP_…`,
    or its name or an alias as an op);
  - the model-zoo fixtures are listed [at the end](#zoo-models).
"""


def render_table(ops, attrs, attr_info, cpu, gpu, conformance, models, unit):
    all_cases = sorted(c for names in conformance.values() for c in names)
    lines = []
    section = None
    for op in ops:
        if op.section != section:
            section = op.section
            lines += ["", "## %s" % section, "",
                      "| Op | Aliases | Attributes | CPU | GPU | Tested by |",
                      "|---|---|---|---|---|---|"]
        info = attr_info.get(op.family)
        if info is None:
            attr_cell, cpu_cell, gpu_cell = "not yet", "not yet", "not yet"
        else:
            path, readable = info
            cells = [render_attr(a) for a in attrs[op.ident]]
            if not readable:
                cells.append("see `%s`" % path)
            attr_cell = ", ".join(cells) if cells else "none"
            cpu_cell = "yes" if op.family in cpu else "no"
            gpu_cell = "yes" if op.family in gpu else "no"
        tested = []
        if op.ident in conformance:
            tested.append("conformance: " + render_cases(
                conformance[op.ident], op, all_cases))
        if op.ident in models:
            tested.append("models: " + ", ".join(
                "`%s`" % m for m in sorted(models[op.ident])))
        if op.ident in unit:
            tested.append("unit: " + ", ".join(
                "`%s`" % u for u in sorted(unit[op.ident])))
        aliases = ", ".join("`%s`" % a for a in op.aliases)
        lines.append("| `%s` | %s | %s | %s | %s | %s |" % (
            op.name, aliases, attr_cell, cpu_cell, gpu_cell,
            "; ".join(tested) if tested else "—"))
    return "\n".join(lines) + "\n"


def render_zoo(ops, zoo):
    uses, models = zoo
    lines = [
        ZOO_BEGIN,
        "## Zoo models",
        "",
        "The ops the Gluon model-zoo fixtures use (generated by",
        "`tests/conformance/gen_fixtures.py --set zoo` into",
        "`~/.cache/hybridinfer/fixtures/zoo`, compared against MXNet 1.9.1 by",
        "the `zoo` test suite).  Those fixtures are not in git: without them",
        "the generator keeps this section as it is and `--check` skips it.",
        "",
        "Models: %s." % ", ".join("`%s`" % m for m in models),
        "",
        "| Op | Used by |",
        "|---|---|",
    ]
    for op in ops:
        if op.ident in uses:
            used = uses[op.ident]
            cell = "all %d models" % len(models) if used == models \
                else ", ".join("`%s`" % m for m in used)
            lines.append("| `%s` | %s |" % (op.name, cell))
    lines.append(ZOO_END)
    return "\n".join(lines) + "\n"


ZOO_ABSENT = """\
%s
## Zoo models

No zoo fixtures were present when this file was generated: run
`tests/conformance/gen_fixtures.py --set zoo`, then regenerate.
%s
""" % (ZOO_BEGIN, ZOO_END)


def zoo_section(text):
    """The committed zoo section, markers included, or None."""
    m = re.search(re.escape(ZOO_BEGIN) + r".*?" + re.escape(ZOO_END) + r"\n?",
                  text, re.S)
    return m.group(0) if m else None


def generate(root, zoo_dir):
    """(document, whether the zoo section came from real fixtures)."""
    ops = read_ops_def(root)
    headers = sorted((root / "core").rglob("*.h")) \
        + sorted((root / "kernels").rglob("*.h"))
    consts = read_constants(headers + sorted((root / "core" / "ops").glob("*.c")))
    attrs, attr_info = read_attributes(root, ops, consts)
    cpu = kernel_families(root / "kernels" / "cpu", "hy_cpu_")
    gpu = kernel_families(root / "kernels" / "cuda", "hy_cuda_")
    index = canonical_index(ops)
    conformance, models = read_fixtures(root, index)
    attr_keys = {a.key for lst in attrs.values() for a in lst}
    unit = read_unit_tests(root, ops, attr_keys)
    zoo = read_zoo(zoo_dir, index)
    body = HEADER + render_table(ops, attrs, attr_info, cpu, gpu,
                                 conformance, models, unit)
    zoo_text = render_zoo(ops, zoo) if zoo else ZOO_ABSENT
    return body + "\n" + zoo_text, zoo is not None


def main(argv=None):
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=here.parent,
                    help="source tree (default: this script's ../)")
    ap.add_argument("--zoo", type=Path, default=DEFAULT_ZOO,
                    help="zoo fixtures directory (default: %(default)s)")
    ap.add_argument("--check", action="store_true",
                    help="compare with the committed file instead of writing")
    args = ap.parse_args(argv)

    root = args.root.resolve()
    doc_path = root / DOC_PATH
    text, zoo_present = generate(root, args.zoo)
    committed = doc_path.read_text() if doc_path.exists() else None
    if not zoo_present and committed and zoo_section(committed):
        # Without the cache, the committed zoo section is the record.
        text = text.replace(zoo_section(text), zoo_section(committed))

    if args.check:
        if committed == text:
            return 0
        diff = difflib.unified_diff(
            (committed or "").splitlines(True), text.splitlines(True),
            str(DOC_PATH) + " (committed)", str(DOC_PATH) + " (regenerated)")
        sys.stdout.writelines(diff)
        print("\n%s is stale: run python3 tools/gen_operators_doc.py"
              % DOC_PATH, file=sys.stderr)
        return 1

    if not zoo_present:
        print("note: no zoo fixtures in %s; %s" % (
            args.zoo, "zoo section kept as committed" if committed
            and zoo_section(committed) else "zoo section left empty"),
            file=sys.stderr)
    if committed != text:
        doc_path.parent.mkdir(parents=True, exist_ok=True)
        doc_path.write_text(text)
        print("wrote %s" % doc_path, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
