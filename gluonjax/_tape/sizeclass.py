"""The VJP of an eager op that ran on a size class (``_ops.buckets``), or as an
exact-shape host program (``_ops.hostcall``: :func:`exact_vjp`).

One program per (op, attributes, dtypes, class, differentiated inputs): it recomputes
the op's forward from the padded inputs (elementwise ops and reductions are cheap to
recompute) and pulls the padded cotangent back. Eager autograd (``nd``) and the
symbolic executor both differentiate size-class calls through :func:`vjp`.
"""

from __future__ import annotations

import jax

from .._caches import LRU
from .._ops import buckets
from .._ops.hostcall import HostCalls
from .node import pullback

__all__ = ["vjp", "exact_vjp"]


def vjp(p, positions, ct, host=False):
    """Cotangents of inputs ``positions`` of plan ``p`` (after :func:`buckets.forward`)
    for the output cotangent ``ct`` (exact shape; a jax array or a :class:`buckets.Host`
    value): jax arrays of the inputs' shapes, or with ``host`` :class:`buckets.Host`
    values (the node-by-node backward passes them on without a put)."""
    wrap = buckets.Host if host else buckets.to_device
    if type(ct) is buckets.Host:
        ct, ct_checked = ct.h, ct.checked
    else:
        ct_checked = None
    n_args = len(p.specs)  # (p.args would pad the inputs)

    def avals():
        return p.avals() + (p.out_aval(),)

    def make():
        pulled = _pulled(p.make(), positions)
        return lambda *a: pulled(a[:n_args], a[n_args])

    key = ("vjp", p.key, tuple(positions))
    prog = buckets.generic(key, make, avals)
    if prog is not None:
        # elementwise, or a reduction's spread: the VJP runs on the unpadded inputs and
        # cotangent
        try:
            head = p.raw_ct(ct)
            ok = buckets.checked(ct, head) if ct_checked is None else ct_checked
            grads = prog.raw(*p.raw, head, checked=p.checked and ok)
            # a cotangent summed back over broadcast axes is a new sum: checked when used
            return tuple(
                wrap(buckets.unraw_input(p, k, g), not buckets.summed_back(p, k))
                for k, g in zip(positions, grads)
            )
        except Exception:  # noqa: BLE001 - a subnormal value (Unsupported), or any other
            pass  # failure of the host run: the padded program below
    grads = buckets.execute(key, make, avals, [*p.args, p.pad_out(ct)])
    return tuple(wrap(buckets.unpad_input(p, k, g), False) for k, g in zip(positions, grads))


def _pulled(fn, positions):
    """``pulled(vals, head)``: the cotangents of ``fn``'s inputs ``positions`` at the
    inputs ``vals`` for the output cotangent ``head``."""

    def pulled(vals, head):
        def f(*d):
            full = list(vals)
            for pos, v in zip(positions, d):
                full[pos] = v
            return (fn(*full),)

        return tuple(pullback(f, [vals[k] for k in positions], (head,))[1])

    return pulled


_EXACT = LRU(1024, "exact-shape VJPs of eager ops")


def exact_vjp(op, static_key, positions, arrays, ct):
    """Cotangents of inputs ``positions`` of an eager call of ``op`` on ``arrays`` (its
    forward ran as an exact-shape host program) for the output cotangent ``ct``: the
    VJP's jaxpr run by NumPy at these shapes, else compiled for them."""
    key = (op.name, static_key, positions)
    pair = _EXACT.get(key)
    if pair is None:
        pulled = _pulled(op.bound(static_key), positions)
        pair = _EXACT.put(key, (HostCalls(pulled, count=False), jax.jit(pulled)))
    host, compiled = pair
    vals = tuple(arrays)
    res = host(vals, ct)
    return res if res is not None else compiled(vals, ct)
