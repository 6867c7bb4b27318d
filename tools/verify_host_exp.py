"""Compare the host's float32 ``exp`` (``gluonjax._ops.host._exp``) with XLA:CPU's on
every one of the 2**32 float32 bit patterns, bit for bit (NaN payloads included).

Run with gluonjax's interpreter, on the machine and jaxlib to verify::

    python tools/verify_host_exp.py            # all 2**32 inputs (minutes)
    python tools/verify_host_exp.py --stride 97  # every 97th pattern (seconds)

A subnormal input is counted apart: XLA:CPU reads it as zero, and a host program hands
such a call to the compiled program before ``_exp`` sees it. Exit status 1 on any other
difference; then ``_EXP_VERIFIED`` must not name this jaxlib.
"""

from __future__ import annotations

import argparse
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from gluonjax._ops import host


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stride", type=int, default=1, help="compare every Nth bit pattern")
    ap.add_argument("--chunk", type=int, default=1 << 24)
    args = ap.parse_args(argv)
    if not host._exp_verified():
        print("this machine or jaxlib is not one the host exp claims (_EXP_VERIFIED);"
              " comparing anyway")  # fmt: skip
        host._exp_state["ok"] = True
    host._EXP_HOST_MAX = 1 << 62  # (the size limit is a speed choice, not a correctness one)
    xla = jax.jit(jnp.exp)
    tiny = np.finfo(np.float32).tiny
    seen = bad = sub = 0
    t0 = time.perf_counter()
    step = args.chunk * args.stride
    for start in range(0, 1 << 32, step):
        u = np.arange(start, min(start + step, 1 << 32), args.stride, dtype=np.uint64)
        x = u.astype(np.uint32).view(np.float32)
        want = np.asarray(xla(x)).view(np.uint32)
        with np.errstate(all="ignore"):
            got = host._exp(x).view(np.uint32)
        diff = want != got
        subnormal = (np.abs(x) < tiny) & (x != 0)
        sub += int((diff & subnormal).sum())
        diff &= ~subnormal
        if diff.any():
            bad += int(diff.sum())
            k = np.flatnonzero(diff)[:5]
            print(f"differ at {[hex(v) for v in u[k]]}: XLA {[hex(v) for v in want[k]]}, "
                  f"host {[hex(v) for v in got[k]]}", flush=True)  # fmt: skip
        seen += x.size
    secs = time.perf_counter() - t0
    print(
        f"jaxlib {jax.lib.__version__ if hasattr(jax.lib, '__version__') else '?'}: "
        f"{seen} inputs, {bad} differ, {sub} subnormal inputs differ (compiled), {secs:.0f} s"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
