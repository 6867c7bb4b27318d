"""Eager execution of registry ops on NDArrays (the ``nd`` hot path).

``invoke(op, args, kwargs)`` parses the attributes (memoised), fetches the
op's cached ``jax.jit`` kernel and calls it once. Under ``autograd.record()``
it calls a cached forward kernel that also returns the VJP closure, and puts a
node on the tape whose backward is one more cached compiled call.
"""

from __future__ import annotations

import jax
import numpy as np

from .. import _rng as _random
from .._caches import LRU
from .._ops import buckets as _buckets
from .._ops import hostcall as _hostcall
from .._ops import registry as _reg
from .._tape import sizeclass as _sizeclass
from .._tape.node import (
    Kind,
    Node,
    OpOrigin,
    apply_multi,
    apply_single,
    entry,
    inexact,
    int_apply,
    int_grad,
    needs_grad,
    vjp_node,
    with_vjp,
)
from .._tape.state import _local as _st
from .._tape.stats import StatWrite
from ..base import DTypeError, MXNetError

_VJP_FWD = LRU(4096, "recorded op kernels")  # (op, attributes, mask) -> forward with VJP
_CLS = [None]  # [NDArray], filled in when ndarray.py has defined it


def invoke(op, args, kwargs, out=None):
    """Run ``op`` eagerly on ``args`` (NDArrays, numpy arrays or scalars)."""
    NDArray = _CLS[0]  # set by ndarray.py (no import on the hot path)
    if op.mode and "_train" not in kwargs:
        kwargs = dict(kwargs, _train=_st.training)
    try:
        static_key, dyn = op.parse_attrs(kwargs)
    except MXNetError:
        raise
    # isinstance: parameter arrays (gluon's ParamArray) are NDArray subclasses
    arrays = [a._data if isinstance(a, NDArray) else a for a in args]
    if op.random:
        arrays[0:0] = _random.key_and_counter()
    arrays.extend(dyn)
    if op.check is not None:  # value checks (take mode='raise'); ops without one pay nothing
        op.check(op.attr_dict(static_key), arrays)
    if _st.recording and any(isinstance(a, NDArray) and needs_grad(a) for a in args):
        res, node_fn = _recorded(op, static_key, args, arrays, NDArray)
    else:
        node_fn = None
        # a new shape runs on its size class, or as its own jaxpr in NumPy (no compile per
        # shape); None: the exact kernel
        if op.bucket is not None:
            res = _buckets.run(op, static_key, arrays, len(args))
        elif op.random:  # a creation op's draws on its size class, or None
            res = _buckets.run_random(op, static_key, arrays) if not args else None
        else:
            res = _hostcall.run(op, static_key, arrays, len(args))
        if res is None:
            try:
                res = op.kernel(static_key)(*arrays)
            except MXNetError:
                raise
            except Exception as err:  # jax shape/dtype errors -> OpError naming the op
                raise op.fail(err, arrays, static_key) from None
    if op.aux:
        res, new_aux = res
        if op.mode and kwargs.get("_train") and _st.scope is None:
            # moving statistics move in the backward, as in MXNet 1.x: a recorded
            # node keeps the write for it; an unrecorded forward writes nothing
            if node_fn is not None:
                node_fn = _stat_node(op, static_key, args, arrays, new_aux, node_fn, NDArray)
        else:
            _write_aux(op, static_key, args, new_aux, NDArray)
    return _wrap(op, static_key, res, node_fn, out, NDArray, args)


def check_same_dtype(op, args):
    """Raise ``DTypeError`` when ``op`` (an ``nd`` call) mixes input dtypes that MXNet's
    type inference refuses; Python scalars and None are not inputs here."""
    first = None
    for a in args:
        dt = getattr(a, "dtype", None)
        if dt is None or not hasattr(a, "shape"):
            continue
        if first is None:
            first = dt
        elif dt != first:
            if not _reg.same_dtype_inputs(op):
                return
            shown = [str(getattr(b, "dtype", type(b).__name__)) for b in args]
            raise DTypeError(
                f"{op.name}: its inputs must have one dtype (as in MXNet), got {shown}; "
                f"cast one of them first (x.astype('{first}')), or use mx.np, which "
                f"promotes as NumPy does"
            )


def check_write(arr, what):
    """Refuse, as MXNet does, an in-place write under ``record()`` into an array the
    tape holds (a recorded result or a variable): its gradient would be undefined."""
    if _st.recording and (arr._node is not None or arr._grad_req in ("write", "add")):
        role = (
            "a variable with attach_grad()"
            if arr._node is None
            else (f"the result of recorded '{arr._node[0].name}'")
        )
        raise MXNetError(
            f"{what} writes in place into {role} (shape {arr.shape}) while recording: "
            f"assigning to arrays already in the computational graph makes their gradient "
            f"undefined. Write into a new array (y = y + 1, nd.where, x.copy()), or call "
            f"backward() first."
        )


def _write_aux(op, static_key, args, new_aux, NDArray):
    names = op.input_names(op.attr_dict(static_key))
    for name, value in zip(op.aux, new_aux):
        target = args[names.index(name)] if name in names else None
        if isinstance(target, NDArray):
            target._data = value


def _stat_node(op, static_key, args, arrays, new_aux, node_fn, NDArray):
    """``node_fn`` that also gives the node the pending write of ``new_aux`` (see
    ``_tape.stats``)."""
    names = op.input_names(op.attr_dict(static_key))
    pos = [names.index(n) for n in op.aux if n in names]
    pairs = [(i, v) for i, v in zip(pos, new_aux) if isinstance(args[i], NDArray)]
    if not pairs:
        return node_fn
    targets = [args[i] for i, _ in pairs]
    kernel, base = op.kernel(static_key), list(arrays)

    def redo(cur):
        full = list(base)
        for (i, _), v in zip(pairs, cur):
            full[i] = v
        got = kernel(*full)[1]
        return [got[pos.index(i)] for i, _ in pairs]

    write = StatWrite(targets, [arrays[i] for i, _ in pairs], [v for _, v in pairs], redo)

    def make_node(outs):
        node = node_fn(outs)
        node.writes = write
        return node

    return make_node


def _diff_mask(args, NDArray):
    return tuple(
        isinstance(a, NDArray) and needs_grad(a) and (inexact(a.dtype) or int_grad(a)) for a in args
    )


def _recorded(op, static_key, args, arrays, NDArray):
    """Forward that also returns the VJP, and a function making the tape node."""
    offset = 2 if op.random else 0
    mask = _diff_mask(args, NDArray)
    ints = tuple(m and not inexact(a.dtype) for a, m in zip(args, mask))
    if any(ints):
        if op.aux or op.random or not op.int_vjp:  # no float stand-ins: zero gradients
            mask = tuple(m and not i for m, i in zip(mask, ints))
        else:
            vjp_key = _float_dtype_key(op, static_key) if "dtype" in op.static_names else None
            return _int_recorded(op, static_key, args, arrays, mask, ints, vjp_key)
    if "dtype" in op.static_names and any(mask):
        vjp_key = _float_dtype_key(op, static_key)
        if vjp_key is not None:  # an integer result (sum(dtype='int32'), astype('int32'))
            return _int_recorded(op, static_key, args, arrays, mask, ints, vjp_key)
    if op.bucket is not None and any(mask):
        hit = _bucket_recorded(op, static_key, args, arrays, mask)
        if hit is not None:
            same = _int_result(op, args, hit[0], mask)
            if same is None:
                return hit
            return _int_recorded(op, static_key, args, arrays, mask, same)
    elif any(mask) and not (op.random or op.aux):
        hit = _host_recorded(op, static_key, args, arrays, mask)
        if hit is not None:
            same = _int_result(op, args, hit[0], mask)
            if same is None:
                return hit
            return _int_recorded(op, static_key, args, arrays, mask, same)
    key = (op.name, static_key, mask, len(arrays))
    fwd = _VJP_FWD.get(key)
    if fwd is None:
        fwd = _VJP_FWD.put(key, _make_vjp_fwd(op, static_key, mask, offset))
    diff = tuple(a for a, m in zip(arrays[offset:], mask) if m)
    try:
        out, aux, vjp_fn = fwd(diff, tuple(arrays))
    except MXNetError:
        raise
    except Exception as err:
        raise op.fail(err, arrays, static_key) from None
    same = _int_result(op, args, out, mask)
    if same is not None:
        return _int_recorded(op, static_key, args, arrays, mask, same)
    inputs = tuple(entry(a) for a, m in zip(args, mask) if m)
    positions = [offset + i for i, m in enumerate(mask) if m]
    replay = _replay(op, static_key, arrays, positions)

    def make_node(outs):
        apply = apply_multi if isinstance(out, (tuple, list)) else apply_single
        avals = tuple(jax.ShapeDtypeStruct(o.shape, o.dtype) for o in outs)
        node = vjp_node(Kind.OP, op.name, inputs, avals, vjp_fn, apply, replay)
        node.origin = OpOrigin(op, static_key, len(args), tuple(positions), offset)
        return node

    return ((out, aux) if op.aux else out), make_node


def _replay(op, static_key, arrays, positions):
    """A node's pure ``replay(*values at positions) -> outputs`` (higher-order gradients)."""
    bound = op.bound(static_key)

    def replay(*pv):
        full = list(arrays)
        for pos, v in zip(positions, pv):
            full[pos] = v
        r = bound(*full)
        if op.aux:
            r = r[0]
        return tuple(r) if isinstance(r, (tuple, list)) else (r,)

    return replay


_FLOAT_KEYS = LRU(1024, "float stand-in attributes")


def _float_dtype_key(op, static_key):
    """``static_key`` with an integer or bool ``dtype`` attribute made float32, or None:
    the VJP of an op with an integer result runs on a float32 one (MXNet passes gradients
    through such results)."""
    hit = _FLOAT_KEYS.get((op.name, static_key))
    if hit is None:
        i = op.static_names.index("dtype")
        d = static_key[i]
        hit = ()
        if d is not None and not op.random and not op.aux and op.num_outputs == 1:
            try:
                if not np.issubdtype(np.dtype(d), np.inexact):
                    hit = static_key[:i] + ("float32",) + static_key[i + 1 :]
            except TypeError:
                pass
        _FLOAT_KEYS.put((op.name, static_key), hit)
    return hit or None


def _int_recorded(op, static_key, args, arrays, mask, ints, vjp_key=None):
    """A recorded op with integer inputs that take part in differentiation (MXNet gives
    them gradients): the output is the op's own; the VJP runs on float32 stand-ins of the
    integer inputs (and of an integer result: ``vjp_key``, the attributes with a float32
    ``dtype``), and the cotangents are cast back (``_tape.node.int_apply``)."""
    vjp_key = static_key if vjp_key is None else vjp_key
    try:
        out = op.kernel(static_key)(*arrays)
    except MXNetError:
        raise
    except Exception as err:
        raise op.fail(err, arrays, static_key) from None
    key = ("int", op.name, vjp_key, mask, len(arrays))
    fwd = _VJP_FWD.get(key)
    if fwd is None:
        fwd = _VJP_FWD.put(key, _make_vjp_fwd(op, vjp_key, mask, 0))
    stand = [a.astype(np.float32) if i else a for a, i in zip(arrays, ints)]
    stand += arrays[len(ints) :]  # dynamic attributes (scalars) follow the inputs
    diff = tuple(a for a, m in zip(stand, mask) if m)
    f_out, _, vjp_fn = fwd(diff, tuple(stand))
    multi = isinstance(out, (tuple, list))
    f_dtype = (f_out[0] if multi else f_out).dtype
    in_dtypes = tuple(
        np.dtype(a.dtype).name if i else None for a, m, i in zip(args, mask, ints) if m
    )
    apply = int_apply(np.dtype(f_dtype).name, in_dtypes, multi)
    inputs = tuple(entry(a) for a, m in zip(args, mask) if m)
    positions = [i for i, m in enumerate(mask) if m]
    replay = _replay(op, static_key, arrays, positions)

    def make_node(outs):
        avals = tuple(jax.ShapeDtypeStruct(o.shape, o.dtype) for o in outs)
        node = vjp_node(Kind.OP, op.name, inputs, avals, vjp_fn, apply, replay)
        node.origin = OpOrigin(op, static_key, len(args), tuple(positions), 0)
        return node

    return out, make_node


def _bucket_recorded(op, static_key, args, arrays, mask):
    """A recorded op on a new shape: the forward and, at backward, the VJP run on the
    size class (``_ops.buckets``, ``_tape.sizeclass``), so neither compiles a program
    per shape."""
    if _buckets.seen(op, static_key, arrays, len(args)):
        return None
    try:
        p = _buckets.plan(op, static_key, arrays, len(args))
        if p is None:
            return None
        out = _buckets.forward(p)
    except Exception:  # noqa: BLE001 - the exact path runs it, or raises the op's error
        return None
    positions = tuple(i for i, m in enumerate(mask) if m)

    def bwd(cts):  # cotangents in and out may be host values (buckets.Host)
        return _sizeclass.vjp(p, positions, cts[0], host=True)

    return out, _bucket_node(op, static_key, args, arrays, mask, positions, bwd)


def _int_result(op, args, out, mask):
    """For a float input differentiated into an integer result (``int_array[key] =
    float_array``), which inputs get float32 stand-ins: those of the result's integer type
    (MXNet's gradient passes through the cast). None otherwise."""
    dt = getattr(out, "dtype", None)
    if dt is None or inexact(dt) or not any(mask) or not op.int_vjp or op.aux or op.random:
        return None
    same = tuple(getattr(a, "dtype", None) == dt for a in args)
    return same if any(same) else None


def _host_recorded(op, static_key, args, arrays, mask):
    """A recorded op without size classes on a new shape: the forward, and at backward
    the VJP, run as exact-shape host programs (``_ops.hostcall``) where the op's jaxpr
    allows; None: the compiled path."""
    if _buckets.seen(op, static_key, arrays, len(args)):
        return None
    out = _hostcall.forward(op, static_key, arrays)
    if out is None or isinstance(out, (tuple, list)):
        return None
    positions = tuple(i for i, m in enumerate(mask) if m)

    def bwd(cts):
        ct = _buckets.on_device(cts[0])
        return _sizeclass.exact_vjp(op, static_key, positions, arrays, ct)

    return out, _bucket_node(op, static_key, args, arrays, mask, positions, bwd)


def _bucket_node(op, static_key, args, arrays, mask, positions, bwd):
    """The maker of the BUCKET tape node of a single-output call (size class or host
    program) whose backward is ``bwd``."""
    replay = _replay(op, static_key, arrays, positions)

    def make_node(outs):
        inputs = tuple(entry(a) for a, m in zip(args, mask) if m)
        avals = (jax.ShapeDtypeStruct(outs[0].shape, outs[0].dtype),)
        node = Node(Kind.BUCKET, op.name, inputs, avals, replay)
        node.bwd = bwd
        node.origin = OpOrigin(op, static_key, len(args), positions, 0)
        return node

    return make_node


def _make_vjp_fwd(op, static_key, mask, offset):
    bound = op.bound(static_key)
    has_aux = bool(op.aux)

    def fwd(diff, arrays):
        def f(*d):
            it = iter(d)
            full = (
                list(arrays[:offset])
                + [next(it) if m else a for a, m in zip(arrays[offset:], mask)]
                + list(arrays[offset + len(mask) :])
            )
            r = bound(*full)
            return r if has_aux else (r, ())

        out, vjp_fn, aux = with_vjp(f, *diff, has_aux=True)
        return out, aux, vjp_fn

    return jax.jit(fwd)


def _wrap(op, static_key, res, node_fn, out, NDArray, args=()):
    multi = isinstance(res, (tuple, list))
    if not multi and node_fn is None and out is None:  # the common case, kept short
        w = NDArray(res)
        for a in args:  # results stay on an input's logical context (see gluonjax.context)
            ctx = getattr(a, "_ctx", None)
            if ctx is not None:
                w._ctx = ctx
                break
        return w
    outs = list(res) if multi else [res]
    wrapped = [NDArray(r) for r in outs]
    for a in args:  # results stay on an input's logical context (see gluonjax.context)
        ctx = getattr(a, "_ctx", None)
        if ctx is not None:
            for w in wrapped:
                w._ctx = ctx
            break
    if node_fn is not None:
        node = node_fn(tuple(outs))
        for i, w in enumerate(wrapped):
            w._node = (node, i)
    if multi:
        nvis = op.n_visible(op.attr_dict(static_key))
        wrapped = wrapped[:nvis]
    if out is not None:
        targets = out if isinstance(out, (list, tuple)) else [out]
        for t in targets:
            check_write(t, f"{op.name}(..., out=)")
        for t, w in zip(targets, wrapped):
            t._data, t._node = w._data, w._node
        return out
    if multi and len(wrapped) > 1:
        return wrapped
    return wrapped[0]
