#!/usr/bin/env python3
"""The block API's exports, read by real MXNet: what hy_block_export writes must load with Gluon.

    check_block_export.py [--locale NAME] EXAMPLE_PROGRAM...

Runs each example program (docs/examples/) with `--out TMP`; the program exports its network to
TMP/NAME-symbol.json + TMP/NAME-NNNN.params (NAME: the program's file name) and saves the input it
ran and the output it got as TMP/NAME-input.npy and TMP/NAME-output.npy.  This script loads the
export with mx.gluon.SymbolBlock.imports(symbol, ['data'], params), runs the same input and
requires

    max|mxnet - ours| <= 1e-5 * max(1, max|mxnet|)

With --locale NAME the programs run with LC_ALL=NAME (e.g. de_DE.UTF-8, whose decimal point is a
comma); the locale must exist (`locale -a`), or every program fails, since a test that silently
ran in the C locale would prove nothing.

Prints TAP, one line per program.
"""

import glob
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

os.environ.setdefault("MXNET_SUBGRAPH_VERBOSE", "0")
# MXNet's own CPU kernels, as the conformance fixtures use (read when mxnet loads).
os.environ["MXNET_MKLDNN_ENABLED"] = "0"
os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
import mxnet as mx  # noqa: E402
from mxnet import gluon  # noqa: E402

# SymbolBlock.imports warns that input dtypes are unknown before the first call: expected.
warnings.filterwarnings("ignore", message="Cannot decide")

RTOL = 1e-5
TIMEOUT_S = 120


def locale_available(name):
    """Whether the C library can load locale `name` (checked the way the programs will use it)."""
    import locale
    saved = locale.setlocale(locale.LC_NUMERIC)
    try:
        locale.setlocale(locale.LC_NUMERIC, name)
        comma = locale.localeconv()["decimal_point"] == ","
    except locale.Error:
        return False
    finally:
        locale.setlocale(locale.LC_NUMERIC, saved)
    return comma


def check(program, out_dir, env):
    name = os.path.basename(program)
    run = subprocess.run([program, "--out", out_dir], capture_output=True, text=True,
                         timeout=TIMEOUT_S, env=env)
    if run.returncode != 0:
        tail = (run.stdout + run.stderr)[-2000:]
        raise AssertionError("%s exited with %d:\n%s" % (name, run.returncode, tail))
    symbol = os.path.join(out_dir, name + "-symbol.json")
    params = sorted(glob.glob(os.path.join(out_dir, name + "-[0-9][0-9][0-9][0-9].params")))
    if not os.path.exists(symbol) or not params:
        raise AssertionError("%s wrote no export in %s" % (name, out_dir))
    x = np.load(os.path.join(out_dir, name + "-input.npy"))
    ours = np.load(os.path.join(out_dir, name + "-output.npy"))

    net = gluon.SymbolBlock.imports(symbol, ["data"], params[-1], ctx=mx.cpu())
    ref = net(mx.nd.array(x)).asnumpy()
    if ref.shape != ours.shape:
        raise AssertionError("shape: MXNet %s, ours %s" % (ref.shape, ours.shape))
    diff = float(np.max(np.abs(ref - ours)))
    bound = RTOL * max(1.0, float(np.max(np.abs(ref))))
    if not diff <= bound:
        raise AssertionError("max|mxnet - ours| = %.3g > %.3g" % (diff, bound))
    return "%s: max|d| %.3g, max|mxnet| %.3g, output %s, %s" % (
        name, diff, float(np.max(np.abs(ref))), ref.shape, os.path.basename(params[-1]))


def main():
    args = sys.argv[1:]
    env = dict(os.environ)
    locale_name = None
    if args[:1] == ["--locale"] and len(args) >= 2:
        locale_name = args[1]
        args = args[2:]
        env["LC_ALL"] = locale_name
    programs = args
    if not programs:
        print(__doc__, file=sys.stderr)
        return 2
    print("1..%d" % len(programs))
    failed = 0
    for i, program in enumerate(programs, 1):
        with tempfile.TemporaryDirectory(prefix="hy-block-export-") as out_dir:
            try:
                if locale_name and not locale_available(locale_name):
                    raise AssertionError("locale %s with a comma decimal point is not installed "
                                         "(tools/setup.sh makes it with localedef)" % locale_name)
                print("ok %d - %s" % (i, check(program, out_dir, env)))
            except Exception as e:  # noqa: BLE001 - every failure is one TAP line
                failed += 1
                print("not ok %d - %s" % (i, os.path.basename(program)))
                for line in str(e).splitlines():
                    print("# " + line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
