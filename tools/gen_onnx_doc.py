#!/usr/bin/env python3
"""Writes the table of ONNX ops in docs/ONNX.md from the importer's own
tables (ops[] in core/io/onnx-ops.c; tail_ops[] in core/io/onnx-tail.c,
what may read a value of data-dependent shape) and the opset range from
core/io/onnx-load.c, so that the page says what the code takes.

    gen_onnx_doc.py [--root DIR]      rewrite the section in place
    gen_onnx_doc.py --check           exit 1, with a diff, when stale

Plain Python 3, standard library only.
"""

import argparse
import difflib
import re
import sys
from pathlib import Path

DOC = Path("docs") / "ONNX.md"
BEGIN = "<!-- onnx-ops:begin (tools/gen_onnx_doc.py) -->"
END = "<!-- onnx-ops:end -->"


def c_strings(text):
    """The values of the C string literals in text, adjacent literals
    joined, in order; NULL and other tokens between commas are None."""
    values, current, i = [], None, 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            j, buf = i + 1, []
            while text[j] != '"':
                if text[j] == "\\":
                    j += 1
                buf.append(text[j])
                j += 1
            current = (current or "") + "".join(buf)
            i = j + 1
        elif ch == ",":
            values.append(current)
            current = None
            i += 1
        else:
            i += 1
    values.append(current)
    return values


def read_ops(root):
    src = (root / "core" / "io" / "onnx-ops.c").read_text()
    body = re.search(r"static const onnx_op ops\[\] = \{\n(.*?)\n\};", src,
                     re.S).group(1)
    rows = []
    for entry in re.findall(r"\{(.*?)\},?\s*$", body, re.S | re.M):
        fields = c_strings(entry)
        name, becomes, notes = fields[0], fields[4], fields[5]
        rows.append((name, becomes or "", notes or ""))
    if not rows:
        sys.exit("gen_onnx_doc: no ops[] entries found in onnx-ops.c")
    # ops[] keeps onnx-select.c's ops as one block at its end: sorted here.
    return sorted(rows)


# The ops that make a value of data-dependent shape (each starts a tail).
DATA_DEPENDENT = {
    "NonZero": "its (rank, N) indices, N at most the input's size",
    "NonMaxSuppression": "ONNX Runtime's selection: `center_point_box` 0 or 1, the optional "
                         "inputs or their defaults; (K, 3) rows, K at most batch × classes × "
                         "min(boxes, `max_output_boxes_per_class`)",
}


def read_tail_ops(root):
    src = (root / "core" / "io" / "onnx-tail.c").read_text()
    body = re.search(r"tail_ops\[\] = \{\n(.*?)\n\};", src, re.S).group(1)
    names = re.findall(r'\{ "(\w+)",', body)
    if not names:
        sys.exit("gen_onnx_doc: no tail_ops[] entries found in onnx-tail.c")
    return names


def read_opsets(root):
    src = (root / "core" / "io" / "onnx-load.c").read_text()
    lo = re.search(r"#define ONNX_MIN_OPSET (\d+)", src).group(1)
    hi = re.search(r"#define ONNX_MAX_OPSET (\d+)", src).group(1)
    return lo, hi


def render(root):
    lo, hi = read_opsets(root)
    lines = [BEGIN,
             f"Opsets {lo} to {hi} of the default domain (`ai.onnx`).",
             "",
             "| ONNX op | becomes | what is taken |",
             "| --- | --- | --- |"]
    tail = read_tail_ops(root)
    rows = read_ops(root) + [(name, "`_hy_onnx_tail` (with what reads it)", notes)
                             for name, notes in DATA_DEPENDENT.items() if name in tail]
    for name, becomes, notes in sorted(rows):
        lines.append(f"| {name} | {becomes} | {notes} |")
    lines += ["",
              "What reads a value of data-dependent shape, directly or through others, joins "
              "its `_hy_onnx_tail` op (\"Shapes that depend on the data\", below), which "
              "takes these ops there: "
              + ", ".join(sorted(n for n in tail if n not in DATA_DEPENDENT)) + ".",
              END]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path,
                    default=Path(__file__).resolve().parent.parent)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    path = args.root / DOC
    old = path.read_text()
    if BEGIN not in old or END not in old:
        sys.exit(f"gen_onnx_doc: {path} has no {BEGIN} ... {END} section")
    head, rest = old.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    new = head + render(args.root) + tail
    if args.check:
        if new != old:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), str(path),
                str(path) + " (regenerated)"))
            print(f"{path} is stale: run tools/gen_onnx_doc.py")
            return 1
        return 0
    if new != old:
        path.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
