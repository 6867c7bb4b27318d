"""Size classes: an eager op on a shape it has not seen runs a program compiled for a
class of sizes, so an eager workload compiles a number of programs that grows with the
log of the sizes it sees, not with the number of its shapes.

XLA compiles one program per input shape, and on the CPU one compile of even the
smallest program costs 30-60 ms, a hundred times an MXNet op. Ops marked in the
registry (``Op.bucket``) run on a new shape through a program for the shape's *size
class* instead:

* ``"map"`` ops (unary math, ops with a scalar, same-shape binary ops, ``clip``,
  ``where``, ``Cast``, activations): the inputs are flattened and padded with ones to
  the next power of two (at least 1024 elements), the program runs on that length, and
  the result is sliced back. Correctly rounded ops give the exact-shape program's values
  bit for bit; for transcendental ones XLA:CPU's exact program computes a loop's last
  (n mod vector width) elements with scalar code, 1-2 ulp from its vector code, and a
  size class (a multiple of the vector width) gives every element the vector value.
* ``"broadcast"`` ops (``broadcast_*``): the inputs are broadcast to the output shape
  on the host, then run as a map. Equal shapes need no copy.
* ``("reduce", identity)`` ops (``sum``, ``mean``, ``prod``, ``max``, ``min``,
  ``nansum``, ``nanprod``, ``norm``): the input is viewed as ``(outer, reduced,
  inner)`` (reduced axes that lie apart are first moved together on the host), each
  padded to its class with the reduction's identity, reduced over the middle axis and
  sliced back. A sum may add in another order than the exact program: equal within
  rounding (tested against float64).

The padding and slicing happen on the host (an eager CPU array's buffer is host
memory, read without a copy), so no program is compiled per shape for them.

Each program is found by a key made *before* anything is traced: (op, attributes,
dtypes, size class). A program made once is written to
``<persistent cache>/eager`` (the directory of :mod:`gluonjax._compile`) as XLA's
serialized executable with a checksum, and a later process loads it without tracing
or lowering; a file that fails its checksum or does not load is compiled again.

A program made only of primitives whose IEEE result is unique (``+ - * /``, ``sqrt``,
comparisons, ``max``/``min``, sums...) is not compiled: :mod:`gluonjax._ops.host`
translates its jaxpr to NumPy steps, which give XLA:CPU's values (its flush-to-zero,
signed-zero order and FMA contraction handled there), written to the same directory as a
checked JSON description. An elementwise one runs on the unpadded inputs and serves every
class of its op, attributes and dtypes (:func:`generic`).

A shape seen :data:`HOT` times gets its exact-shape program (the op's usual kernel):
loops on fixed shapes run as before. Only concrete single-device CPU arrays take this
path; traced values (hybridize, export), other devices and the fused step keep exact
shapes. ``GLUONJAX_SIZE_CLASSES=0`` turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np

from .. import _compile
from .._caches import LRU
from . import host as _host
from .defs.reduce import norm_axes

__all__ = ["HOT", "size_class", "run", "plan", "program", "enabled", "stats"]

HOT = 64  # calls on one exact shape before it gets its own program (a compile: ~30 ms)
_FLAT_FLOOR = 1024  # smallest flat class: every array up to 1024 elements shares one program
_DIM_FLOOR = 16  # smallest class of a reduction's dimension (1 stays 1)
_SEEN_MAX = 1 << 14

try:  # the concrete array type: tracers and other array kinds keep exact shapes
    from jax._src.array import ArrayImpl as _ARRAY
except ImportError:  # pragma: no cover - a jax without it: the path stays off
    _ARRAY = None

_OFF = ("0", "off", "false", "no", "none")
_state = {"on": None, "no_load": set()}  # keys whose file failed: compiled here
_lock = threading.Lock()
_PROGRAMS = LRU(4096, "size-class programs")
STATS = {
    "compiled": 0,
    "loaded": 0,
    "host": 0,
    "host_made": 0,
    "host_loaded": 0,
    "runs": 0,
    "compile_s": 0.0,
    "load_s": 0.0,
    "host_s": 0.0,
}


def enabled():
    on = _state["on"]
    if on is None:
        raw = os.environ.get("GLUONJAX_SIZE_CLASSES", "1").strip().lower()
        on = _state["on"] = raw not in _OFF and _ARRAY is not None
    return on


def stats():
    """``{'compiled', 'loaded', 'host', 'host_made', 'host_loaded', 'runs', 'compile_s',
    'load_s', 'host_s'}``: programs compiled and loaded from disk by this process (and
    the seconds each took, writing included); programs NumPy runs on the host (made from
    a jaxpr here, or read from disk) and their seconds; eager calls that ran on a size
    class."""
    return dict(STATS)


def size_class(n, floor=_FLAT_FLOOR):
    """The smallest power of two >= ``n``, at least ``floor``."""
    if n <= floor:
        return floor
    return 1 << (n - 1).bit_length()


def _dim_class(n):
    return 1 if n == 1 else size_class(n, _DIM_FLOOR)


# ----------------------------------------------------------------------------- plans
class Plan:
    """How one call runs on a size class.

    ``key`` names the program (op, attributes, dtypes, classes), ``make()`` returns the
    pure function it compiles, ``avals()`` its argument types (made only to compile),
    ``args`` the padded host arguments (padded when first read), and ``unpad`` turns the
    program's outputs back into the call's.
    ``raw`` are the arguments unpadded (a map's inputs as they are, a reduction's input
    viewed as ``(outer, reduced, inner)``) for a program that NumPy runs on any shape
    (``HostProgram.generic``), and ``raw_out`` makes its output the call's.
    ``out_shape`` is the exact output shape; for a broadcast, ``bcast[i]`` is input
    ``i``'s shape before broadcasting (its cotangent is summed back to it).
    """

    __slots__ = ("key", "make", "specs", "pad", "_args", "raw", "raw_out", "out_shape",
                 "out_cls", "unpad", "bcast", "pad_out", "unpad_in", "out_spec",
                 "checked", "raw_ct")  # fmt: skip

    @property
    def args(self):
        if self._args is None:
            self._args = self.pad()
        return self._args

    def avals(self):
        return tuple(
            s if not isinstance(s, tuple) else jax.ShapeDtypeStruct(*s) for s in self.specs
        )

    def out_aval(self):
        """The program's (padded) output type, once :func:`forward` ran."""
        return jax.ShapeDtypeStruct(*self.out_spec)


# set on a jax array this module made from a host result (``to_device(..., checked=True)``)
# or whose values it checked: it lies on the default CPU device and holds no value that
# XLA:CPU flushes (a program's outputs never do), so a host program reads it unchecked
_CHECKED = "_gj_checked"


def host_views(ins):
    """``(host views of ins, whether every one is checked)``, or None unless every input is
    a jax array on the default CPU device. An input checked here is marked
    (:data:`_CHECKED`): its next op skips the check."""
    hosts = []
    checked = True
    for a in ins:
        if getattr(a, _CHECKED, False):
            hosts.append(np.asarray(a))
            continue
        if not _concrete_cpu((a,)):
            return None
        h = np.asarray(a)
        hosts.append(h)
        # unchecked: the host program raises Unsupported again, and its caller compiles
        checked = _checked(a, h) and checked
    return hosts, checked


def checked(a, h):
    """Whether jax array ``a`` (host view ``h``) holds no value XLA:CPU flushes: marked,
    or checked now (and marked)."""
    return getattr(a, _CHECKED, False) or _checked(a, h)


def _checked(a, h):
    try:
        _host._check(h)
    except _host.Unsupported:
        return False
    _mark(a)
    return True


def summed_back(p, k):
    """Whether input ``k``'s cotangent of plan ``p`` is summed back over broadcast axes
    (a sum on the host, whose result may hold a value XLA:CPU flushes)."""
    return p.bcast is not None and p.bcast[k] != p.out_shape


def _mark(a):
    try:
        setattr(a, _CHECKED, True)
    except AttributeError:  # a jax whose arrays take no attributes: checked every time
        pass


def _concrete_cpu(ins):
    dev = None
    for a in ins:
        if type(a) is not _ARRAY:
            return False
        s = a.sharding
        if not isinstance(s, jax.sharding.SingleDeviceSharding):
            return False
        d = next(iter(s.device_set))
        if d.platform != "cpu" or (dev is not None and d is not dev):
            return False
        dev = d
    return dev is not None and dev is _default_device()


def _default_device():
    dev = _DEV.get("dev")
    if dev is None:
        dev = _DEV["dev"] = jax.devices()[0]
    return dev


_DEV = {}


def _dyn_avals(dyn):
    avals = []
    for v in dyn:
        if type(v) not in (float, int, bool):
            return None
        try:
            avals.append(jax.typeof(v))
        except (OverflowError, TypeError):
            return None
    return tuple(avals)


def _pad_value(dtype, ident):
    if ident == "low":
        return -np.inf if np.issubdtype(dtype, np.inexact) else np.iinfo(dtype).min
    if ident == "high":
        return np.inf if np.issubdtype(dtype, np.inexact) else np.iinfo(dtype).max
    return ident


def plan(op, static_key, arrays, n):
    """A :class:`Plan` for ``op`` on ``arrays`` (``n`` arrays, then the dynamic
    attributes), or None where the call keeps its exact shape."""
    ins, dyn = arrays[:n], arrays[n:]
    views = host_views(ins) if ins else None
    if views is None:
        return None
    dyn_avals = _dyn_avals(dyn)
    if dyn_avals is None:
        return None
    kind = op.bucket
    dtypes = tuple(a.dtype for a in ins)
    if any(d == np.dtype(bool) or d.kind == "V" for d in dtypes):
        return None
    if kind == "map" or kind == "broadcast":
        p = _map_plan(op, static_key, ins, views[0], dyn, dyn_avals, dtypes, kind)
    elif kind == "contract":
        p = _contract_plan(op, static_key, views[0], dyn, dtypes)
    else:
        p = _reduce_plan(op, static_key, ins, views[0], dyn, dtypes, kind[1])
    if p is not None:
        p.checked = views[1]
    return p


def _map_plan(op, static_key, ins, hosts, dyn, dyn_avals, dtypes, kind):
    shapes = [tuple(a.shape) for a in ins]
    out_shape = shapes[0]
    bcast = None
    if any(s != out_shape for s in shapes):
        if kind != "broadcast":
            return None  # the exact kernel raises the op's own error
        try:
            out_shape = tuple(np.broadcast_shapes(*shapes))
        except ValueError:
            return None
        bcast = shapes
    size = math.prod(out_shape)
    if size == 0:
        return None
    b = size_class(size)

    def pad():
        args = []
        for h, s in zip(hosts, shapes):
            if s != out_shape:
                h = np.broadcast_to(h, out_shape)
            buf = np.ones(b, h.dtype)
            buf[:size] = h.reshape(-1)
            args.append(buf)
        return args + list(dyn)

    p = Plan()
    p.key = (*_map_key(op, static_key, dtypes, dyn), b)
    p.make = lambda: op.bound(static_key)
    p.specs = tuple(((b,), d) for d in dtypes) + dyn_avals
    p.pad, p._args = pad, None
    p.raw = hosts + list(dyn)
    p.raw_out = lambda r: r if r.shape == out_shape else np.broadcast_to(r, out_shape)
    p.out_cls = (b,)
    p.out_shape, p.bcast = out_shape, bcast
    p.pad_out = lambda ct: _pad_flat(ct, b, size)
    p.raw_ct = np.asarray
    p.unpad = lambda outs: [np.asarray(o)[:size].reshape(out_shape) for o in outs]
    return p


def _map_key(op, static_key, dtypes, dyn):
    """An elementwise program's key less its class: the scalars by Python type (int,
    float, bool: each one aval), so that a call finds its family's generic program
    (:func:`_direct`) before any aval is made."""
    return ("map", op.name, static_key, dtypes, tuple([type(v) for v in dyn]))


def _pad_flat(ct, b, size):
    h = np.asarray(ct)
    buf = np.zeros(b, h.dtype)
    buf[:size] = h.reshape(-1)
    return buf


_MEAN_ACC = {np.dtype(np.float16): np.float32, np.dtype(jnp.bfloat16): np.float32}


def _mean(x, count):
    acc = _MEAN_ACC.get(np.dtype(x.dtype), x.dtype)
    s = jnp.sum(x.astype(acc), axis=1, dtype=acc)
    return (s / jnp.asarray(count, acc)).astype(x.dtype)


_REDUCE_FORMS = LRU(4096, "reductions' axes by attributes and rank")


def _reduce_form(op, static_key, ndim):
    """What a reduction's attributes mean at rank ``ndim`` (memoised: no attribute
    parsing per call): ``(axes, perm, a0, a1, keepdims, canon)``, or None."""
    key = (op.name, static_key, ndim)
    form = _REDUCE_FORMS.get(key)
    if form is not None:
        return form
    attrs = op.attr_dict(static_key)
    try:
        axes = norm_axes(ndim, attrs["axis"], attrs.get("exclude", False))
    except ValueError:
        axes = ()
    perm = None
    if axes and axes != tuple(range(axes[0], axes[-1] + 1)):
        # axes apart: the kept axes first, in order, then the reduced ones (a host copy)
        perm = tuple(k for k in range(ndim) if k not in axes) + axes
        a0, a1 = ndim - len(axes), ndim
    else:
        a0, a1 = (axes[0], axes[-1] + 1) if axes else (0, 0)
    # the same attributes, reducing axis 1 of (outer, reduced, inner)
    canon = dict(attrs, axis=1, keepdims=False)
    if "exclude" in canon:
        canon["exclude"] = False
    canon = tuple(canon[k] for k in op.static_names)
    return _REDUCE_FORMS.put(key, (axes, perm, a0, a1, bool(attrs["keepdims"]), canon))


def _reduce_view(form, shape, h):
    """A reduction's input ``h`` of ``shape`` viewed as ``(outer, reduced, inner)`` by
    ``form`` (:func:`_reduce_form`): ``(view, moved shape, output shape)``, or None where
    the call keeps its exact shape."""
    axes, perm, a0, a1, keepdims, _ = form
    if not axes or math.prod(shape) == 0:
        return None
    if perm is not None:
        h = np.transpose(h, perm)
    moved = h.shape
    view = h.reshape(math.prod(moved[:a0]), math.prod(moved[a0:a1]), math.prod(moved[a1:]))
    if keepdims:
        out_shape = tuple(1 if k in axes else d for k, d in enumerate(shape))
    else:
        out_shape = tuple(d for k, d in enumerate(shape) if k not in axes) or (1,)
    return view, moved, out_shape


def _reduce_key(op, canon, ident, dtype):
    """A reduction's program key less its class (``mean`` divides by a count argument)."""
    return ("reduce", op.name, canon if ident != "mean" else (), dtype)


def _direct_reduce(op, static_key, arrays, n, ident):
    """A reduction whose family already has a generic host program: run it on the
    ``(outer, reduced, inner)`` view, without a plan. None: take the plan's path."""
    if n != 1 or len(arrays) != 1:
        return None
    x = arrays[0]
    form = _reduce_form(op, static_key, x.ndim)
    prog = _GENERIC.get(_reduce_key(op, form[5], ident, x.dtype))
    if prog is None:
        return None
    views = host_views(arrays)
    if views is None:
        return None
    seen = _reduce_view(form, x.shape, views[0][0])
    if seen is None:
        return None
    view, _, out_shape = seen
    try:
        args = (view, float(view.shape[1])) if ident == "mean" else (view,)
        out = prog.raw(*args, checked=views[1])[0]
    except _host.Unsupported:
        return None  # a subnormal value: the plan's path hands it to the compiled program
    STATS["runs"] += 1
    return to_device(out.reshape(out_shape), True)


def _reduce_plan(op, static_key, ins, hosts, dyn, dtypes, ident):
    if len(ins) != 1 or dyn:
        return None
    shape = tuple(ins[0].shape)
    dtype = dtypes[0]
    if ident == "mean" and not np.issubdtype(dtype, np.floating):
        return None
    form = _reduce_form(op, static_key, len(shape))
    seen = _reduce_view(form, shape, hosts[0])
    if seen is None:
        return None
    view, moved, out_shape = seen
    perm, canon = form[1], form[5]
    o, r, i = view.shape
    bo, br, bi = _dim_class(o), _dim_class(r), _dim_class(i)

    def pad():
        buf = np.full((bo, br, bi), _pad_value(dtype, 0 if ident == "mean" else ident), dtype)
        buf[:o, :r, :i] = view
        return [buf, float(r)] if ident == "mean" else [buf]

    p = Plan()
    p.pad, p._args = pad, None
    p.raw = [view, float(r)] if ident == "mean" else [view]
    p.raw_out = lambda res: res.reshape(out_shape)
    p.out_cls = (bo, bi)
    if ident == "mean":
        p.make = lambda: _mean
        p.specs = (((bo, br, bi), dtype), jax.typeof(1.0))
    else:
        p.make = lambda: op.bound(canon)
        p.specs = (((bo, br, bi), dtype),)
    p.key = (*_reduce_key(op, canon, ident, dtype), (bo, br, bi))
    p.out_shape, p.bcast = out_shape, None

    def pad_out(ct):
        h = np.asarray(ct).reshape(o, i)
        out = np.zeros((bo, bi), h.dtype)
        out[:o, :i] = h
        return out

    p.pad_out = pad_out
    p.raw_ct = lambda ct: np.asarray(ct).reshape(o, i)
    p.unpad = lambda outs: [np.asarray(outs[0])[:o, :i].reshape(out_shape)]
    if perm is None:
        p.unpad_in = lambda _k, g: np.asarray(g)[:o, :r, :i].reshape(shape)
    else:
        back = tuple(np.argsort(perm))
        p.unpad_in = lambda _k, g: np.transpose(np.asarray(g)[:o, :r, :i].reshape(moved), back)
    return p


# padded multiply-adds up to which a matrix product runs on its class; a larger one
# keeps its sizes (a program per shape: NumPy's, translated in ~1 ms, for float32,
# float64 and integers), where padding could add up to 8x the work
_CONTRACT_MAX = 1 << 21


def _contract_plan(op, static_key, hosts, dyn, dtypes):
    """``dot`` and ``batch_dot``: each operand viewed as a matrix (``dot``: its free axes
    flattened) or a stack of them (``batch_dot``: its batch axes flattened into one),
    each axis padded with zeros to its class, multiplied with the call's transposes and
    sliced back. The padding adds zero terms: equal to the exact program's values within
    rounding (a sum may run in another order)."""
    if dyn or len(hosts) != 2 or dtypes[0] != dtypes[1]:
        return None
    a, b = hosts
    ta, tb = static_key[0], static_key[1]  # (transpose_a, transpose_b, forward_stype)
    if op.name == "batch_dot":
        if a.ndim < 3 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2]:
            return None
        lead = a.shape[:-2]
        a = a.reshape(math.prod(lead), *a.shape[-2:])
        b = b.reshape(math.prod(lead), *b.shape[-2:])
    else:
        if a.ndim == 0 or b.ndim == 0 or (a.ndim == 1 and b.ndim == 1):
            return None
        k = a.shape[0 if ta else -1]
        lead = (a.shape[1:] if ta else a.shape[:-1]) + (b.shape[:-1] if tb else b.shape[1:])
        if k != b.shape[-1 if tb else 0]:
            return None
        a = a.reshape(k, -1) if ta else a.reshape(-1, k)
        b = b.reshape(-1, k) if tb else b.reshape(k, -1)
    m, k = (a.shape[-1], a.shape[-2]) if ta else (a.shape[-2], a.shape[-1])
    n, k_b = (b.shape[-2], b.shape[-1]) if tb else (b.shape[-1], b.shape[-2])
    if k != k_b or 0 in a.shape or 0 in b.shape:
        return None
    # (1 is padded too: unlike a reduction's axis, no axis of a product is dropped)
    ca = tuple(size_class(d, _DIM_FLOOR) for d in a.shape)
    cb = tuple(size_class(d, _DIM_FLOOR) for d in b.shape)
    if math.prod(ca) * (cb[-2] if tb else cb[-1]) > _CONTRACT_MAX:
        ca, cb = a.shape, b.shape  # large: no padding (a program per shape)
    cm, cn = (ca[-1] if ta else ca[-2]), (cb[-2] if tb else cb[-1])
    out_view, out_cls = (*a.shape[:-2], m, n), (*ca[:-2], cm, cn)
    out_shape = lead + (m, n) if op.name == "batch_dot" else lead
    cut = tuple(slice(0, d) for d in out_view)
    views, shapes = (a, b), (hosts[0].shape, hosts[1].shape)
    dtype = dtypes[0]
    p = Plan()
    p.key = ("contract", op.name, static_key, dtype, ca, cb)
    p.make = lambda: op.bound(static_key)
    p.specs = ((ca, dtype), (cb, dtype))
    p.pad, p._args = (lambda: [_zero_padded(a, ca), _zero_padded(b, cb)]), None
    p.raw = list(views)
    p.raw_out = lambda r: r.reshape(out_shape)
    p.out_cls = out_cls
    p.out_shape, p.bcast = out_shape, None
    p.pad_out = lambda ct: _zero_padded(np.asarray(ct).reshape(out_view), out_cls)
    p.raw_ct = lambda ct: np.asarray(ct).reshape(out_view)
    p.unpad = lambda outs: [np.asarray(outs[0])[cut].reshape(out_shape)]
    p.unpad_in = lambda k, g: _cut(g, views[k].shape).reshape(shapes[k])
    return p


def _cut(g, shape):
    return np.asarray(g)[tuple(slice(0, d) for d in shape)]


def _zero_padded(h, shape):
    buf = np.zeros(shape, h.dtype)
    buf[tuple(slice(0, d) for d in h.shape)] = h
    return buf


def unpad_input(p, k, g):
    """Input ``k``'s cotangent of exact shape from the program's padded one."""
    if p.key[0] == "reduce" or p.key[0] == "contract":
        return p.unpad_in(k, g)
    size = math.prod(p.out_shape)
    h = np.asarray(g)[:size].reshape(p.out_shape)
    if summed_back(p, k):
        h = _unbroadcast(h, p.bcast[k])
    return h


def _unbroadcast(h, shape):
    """Sum a cotangent of the broadcast shape back to ``shape`` (float32 accumulation
    for half types, as XLA's reduction)."""
    lead = h.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + k for k, d in enumerate(shape) if d == 1 and h.shape[lead + k] != 1
    )
    acc = np.float32 if h.dtype.kind == "f" and h.dtype.itemsize < 4 else h.dtype
    out = h.sum(axis=axes, dtype=acc) if axes else h
    return np.asarray(out, h.dtype).reshape(shape)


# ----------------------------------------------------------------------------- programs
class _Loaded:
    """A program read back from disk: XLA's executable, called without jax's dispatch."""

    __slots__ = ("exe", "dtypes")

    def __init__(self, exe, avals):
        self.exe, self.dtypes = exe, [a.dtype for a in avals]

    def __call__(self, *args):
        res = self.exe.execute_sharded(
            [to_device(np.asarray(a, d)) for a, d in zip(args, self.dtypes)]
        )
        return [x[0] for x in res.disassemble_into_single_device_arrays()]


class _Fresh:
    """A program compiled by this process, called through jax's C++ dispatch (its AOT
    compile is the one the jitted function runs: no second compile)."""

    __slots__ = ("jitted",)

    def __init__(self, jitted):
        self.jitted = jitted

    def __call__(self, *args):
        out = self.jitted(*args)
        return list(out) if isinstance(out, (tuple, list)) else [out]


def program(key, make, avals, host=True):
    """The program for ``key``: from memory; computed by NumPy on the host where its
    jaxpr allows (:mod:`gluonjax._ops.host`, ``host=True``); from disk; or ``make()``
    compiled for the argument types ``avals()`` (and written)."""
    mkey = key if host else ("xla", key)
    prog = _PROGRAMS.get(mkey)
    if prog is not None:
        return prog
    with _lock:
        prog = _PROGRAMS.get(mkey)
        if prog is not None:
            return prog
        types = avals()
        t0 = time.perf_counter()
        if host and _host_on():
            prog = _host_program(key, make, types)
            if prog is not None:
                STATS["host"] += 1
                STATS["host_s"] += time.perf_counter() - t0
                return _PROGRAMS.put(key, prog)
            mkey = ("xla", key)  # no host form: the compiled program serves both names
        prog = _PROGRAMS.get(mkey) or _compiled(key, make, types, t0)
        _PROGRAMS.put(mkey, prog)
        if host:
            _PROGRAMS.put(key, prog)
    return prog


def _compiled(key, make, types, t0):
    prog = _load(key, types)
    if prog is None:
        jitted = jax.jit(make(), keep_unused=True)
        compiled, fresh = _compile_fresh(jitted, types)
        STATS["compiled"] += 1
        prog = _Fresh(jitted)
        if fresh:
            _save(key, compiled)
        STATS["compile_s"] += time.perf_counter() - t0
    else:
        STATS["loaded"] += 1
        STATS["load_s"] += time.perf_counter() - t0
    return prog


def _host_on():
    on = _state.get("host")
    if on is None:
        raw = os.environ.get("GLUONJAX_HOST_OPS", "1").strip().lower()
        on = _state["host"] = raw not in _OFF
    return on


def _compile_fresh(jitted, types):
    """Compile ``jitted`` by XLA; ``(compiled, fresh)``. A size-class program is written to
    the eager store, and XLA:CPU cannot serialize again an executable it deserialized (the
    copy fails to run: "Function ... not found"), so jax's persistent cache is bypassed
    here. jax decides once per process whether it uses that cache
    (``config.enable_compilation_cache`` cannot switch it off later); the decision is set
    aside for this compile, and ``fresh`` is False, and nothing is written, when jax's
    cache-hit event says it served the executable anyway."""
    lowered = jitted.lower(*types)
    before = _HITS[0] if _listening() else None
    with _jax_cache_aside():
        compiled = lowered.compile()
    return compiled, before is not None and _HITS[0] == before


@contextlib.contextmanager
def _jax_cache_aside():
    try:
        from jax._src import compilation_cache as cc

        cc.is_cache_used(_default_device().client)  # jax's one decision, made now
        saved = cc._cache_used
    except (ImportError, AttributeError):  # another jax: its cache may serve (event check)
        yield
        return
    cc._cache_used = False
    try:
        yield
    finally:
        cc._cache_used = saved


_HITS = [0]


def _listening():
    """Count jax's persistent-cache hits (registered once); False if this jax lacks the
    event API (then nothing compiled is written)."""
    if "listening" not in _state:
        try:
            from jax._src import monitoring

            def on_event(event, **_):
                if event == "/jax/compilation_cache/cache_hits":
                    _HITS[0] += 1

            monitoring.register_event_listener(on_event)
            _state["listening"] = True
        except (ImportError, AttributeError):
            _state["listening"] = False
    return _state["listening"]


def execute(key, make, avals, args):
    """Run program ``key`` on ``args``; its outputs as host arrays. A call the host
    program declines (a subnormal value) runs the compiled one. A program loaded from
    disk that fails to run is dropped, with its file, and compiled again."""
    prog = program(key, make, avals)
    try:
        return [np.asarray(o) for o in prog(*args)]
    except _host.Unsupported:
        pass
    except Exception:  # noqa: BLE001 - checked below: only a loaded program is retried
        if type(prog) is not _Loaded:
            raise
        _drop(key)
    prog = program(key, make, avals, host=False)
    try:
        return [np.asarray(o) for o in prog(*args)]
    except Exception:  # noqa: BLE001 - as above
        if type(prog) is not _Loaded:
            raise
    _drop(key)
    return [np.asarray(o) for o in program(key, make, avals, host=False)(*args)]


def _drop(key):
    """Forget a loaded program that failed to run, and its file; compile it next."""
    _PROGRAMS.discard(key)
    _PROGRAMS.discard(("xla", key))
    path = _path(key)
    if path is not None:
        try:
            os.remove(path)
        except OSError:
            pass
    _state["no_load"].add(key)


_MAGIC = b"GJEAGER1"
_disk = {"dir": None, "env": None, "files": None}
_MAX_FILES = 50_000


def _store():
    if _disk["env"] is None:
        d = _compile.cache_dir()
        if d is not None:
            d = os.path.join(d, "eager")
        import jaxlib

        dev = _default_device()
        _disk["env"] = repr(
            (
                jax.__version__, jaxlib.__version__, dev.platform, dev.client.platform_version,
                dev.device_kind, os.environ.get("XLA_FLAGS", ""), os.uname().machine,
                _digest(),
            )
        )  # fmt: skip
        _disk["dir"] = d
    return _disk["dir"]


def _source_digest():
    """A digest of the op implementations (every file of ``gluonjax/_ops``): a program
    on disk names its op and attributes, not its code, so another gluonjax (an upgrade,
    an edited op) must not find it."""
    h = hashlib.sha256()
    root = os.path.dirname(os.path.abspath(__file__))
    for base, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                with open(os.path.join(base, name), "rb") as f:
                    h.update(name.encode() + b"\0" + f.read())
    return h.hexdigest()


_DIGEST = {}


def _digest_ahead():
    """Start reading the op sources for :func:`_source_digest` in a thread at import
    (about 1 ms of file reads), so that the first eager op on a new shape finds it
    made."""

    def work():
        try:
            _DIGEST["value"] = _source_digest()
        except Exception:  # noqa: BLE001 - made again (and raised) when needed
            pass

    t = threading.Thread(target=work, name="gluonjax-digest", daemon=True)
    try:
        t.start()
    except RuntimeError:  # no thread to be had: :func:`_digest` reads them when needed
        return
    _DIGEST["thread"], _DIGEST["pid"] = t, os.getpid()


def _digest():
    value = _DIGEST.get("value")
    if value is None:
        t = _DIGEST.get("thread")
        if t is not None and _DIGEST.get("pid") == os.getpid():
            t.join()  # (a forked child has no such thread: it reads them itself)
            value = _DIGEST.get("value")
        if value is None:
            value = _DIGEST["value"] = _source_digest()
    return value


_digest_ahead()


def _path(key, ext=".xla"):
    d = _store()
    if d is None:
        return None
    text = repr(key)
    if " at 0x" in text:  # an attribute without a stable form: not across processes
        return None
    digest = hashlib.sha256((_disk["env"] + text).encode()).hexdigest()
    return os.path.join(d, digest[:2], digest[2:] + ext)


def _read(path):
    """The payload of a file :func:`_write` wrote, or None (missing, truncated, foreign)."""
    if path is None or not os.path.exists(path):
        return None
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError:
        return None
    head, digest, payload = blob[:8], blob[8:40], blob[40:]
    if head != _MAGIC or hashlib.sha256(payload).digest() != digest:
        return None  # truncated or foreign: made again (and overwritten)
    return payload


def _write(path, payload):
    """Write ``payload`` with a checksum, atomically; nothing on a read-only or full disk
    or past :data:`_MAX_FILES` files."""
    if path is None:
        return
    try:
        d = os.path.dirname(path)
        if _disk["files"] is None:
            os.makedirs(_disk["dir"], exist_ok=True)
            _disk["files"] = sum(len(f) for _, _, f in os.walk(_disk["dir"]))
        if _disk["files"] >= _MAX_FILES:
            return
        os.makedirs(d, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "wb") as f:
            f.write(_MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, path)
        _disk["files"] += 1
    except OSError:
        return


def _load(key, avals):
    if key in _state["no_load"]:
        return None
    payload = _read(_path(key))
    if payload is None:
        return None
    try:
        from jax._src.lib import xla_client as xc

        dev = _default_device()
        exe = dev.client.deserialize_executable(payload, executable_devices=xc.DeviceList((dev,)))
        return _Loaded(exe, avals)
    except Exception:  # noqa: BLE001 - a file this jaxlib cannot read: compile again
        return None


def _save(key, compiled):
    try:
        exe = compiled._executable.xla_executable
        payload = exe.client.serialize_executable(exe)
    except Exception:  # noqa: BLE001 - an executable this jaxlib cannot write: keep it here
        return
    _write(_path(key), payload)


_NO_HOST = b"none"


def _host_program(key, make, types):
    """The host form of program ``key``: from disk (a JSON description, or the note that
    it has none), else translated from ``make()``'s jaxpr and written. None: compile."""
    path = _path(key, ".host")
    payload = _read(path)
    if payload == _NO_HOST:
        return None
    if payload is not None:
        try:
            prog = _host.HostProgram.from_json(payload.decode())
            STATS["host_loaded"] += 1
            return prog
        except Exception:  # noqa: BLE001 - a file of another form: translate again
            pass
    prog = _host.translate(make(), types, vector_body=True)
    STATS["host_made"] += prog is not None
    _write(path, _NO_HOST if prog is None else prog.to_json().encode())
    return prog


# ----------------------------------------------------------------------------- calls
def _shape_key(static_key, arrays, n):
    """``(attributes, input shapes)``, or None for an input without a shape."""
    try:
        if n == 1:
            return (static_key, arrays[0].shape)
        if n == 2:
            return (static_key, arrays[0].shape, arrays[1].shape)
        return (static_key, *[a.shape for a in arrays[:n]])
    except AttributeError:
        return None


def _count(op, k):
    """Count a call under key ``k``; True once it is hot or size classes are off."""
    s = op._seen
    c = s.get(k, 0)
    if c >= HOT or not enabled():
        return True
    if len(s) >= _SEEN_MAX:
        s.clear()
    s[k] = c + 1
    return False


def seen(op, static_key, arrays, n):
    """Count a call on these exact shapes; True once they are hot (exact program) or
    when size classes are off."""
    k = _shape_key(static_key, arrays, n)
    return k is None or _count(op, k)


_PUT = {}


def to_device(h, checked=False):
    """A host array as a jax array on the default device: a copy and no program
    (``jnp.asarray`` of a numpy array compiles one per shape). jaxlib's batched put
    takes 3 us where ``jax.device_put`` takes 30; if this jaxlib lacks it, the latter.
    ``checked``: ``h`` is a program's output (host or compiled), so it holds no value
    XLA:CPU flushes; the array is marked (:func:`host_views`)."""
    if type(h) is not np.ndarray:
        h = np.asarray(h)
    if not h.flags.c_contiguous:  # (np.ascontiguousarray would make rank 0 rank 1)
        h = np.ascontiguousarray(h)
    x64 = jax.config.jax_enable_x64  # (jax.enable_x64 scopes it: read per call)
    if h.dtype.itemsize == 8 and not x64:  # what device_put does
        h = h.astype(jax.dtypes.canonicalize_dtype(h.dtype))
    put = _PUT.get("put")
    if put is None:
        put = _PUT["put"] = _fast_put() or (lambda v, _x64: jax.device_put(v))
    out = put(h, x64)
    if checked:
        _mark(out)
    return out


def _fast_put():
    try:
        from jax._src import core
        from jax._src.lib import xla_client as xc

        dev = _default_device()
        sharding = jax.sharding.SingleDeviceSharding(dev)
        avals = {}

        def put(h, x64):
            k = (h.shape, h.dtype)
            aval = avals.get(k)
            if aval is None:
                if len(avals) > 4096:
                    avals.clear()
                aval = avals[k] = core.ShapedArray(h.shape, h.dtype)
            return xc.batched_device_put(aval, sharding, [h], [dev], True, enable_x64=x64)

        probe = np.arange(3, dtype=np.float32)
        if not np.array_equal(np.asarray(put(probe, False)), probe):
            return None
        return put
    except Exception:  # noqa: BLE001 - another jaxlib: the public path
        return None


def run(op, static_key, arrays, n):
    """``op``'s result computed on its size class, or None: run the exact kernel."""
    # runs before every eager call of a marked op: a hot shape costs one key and one get
    k = _shape_key(static_key, arrays, n)
    if k is None or _count(op, k):
        return None
    try:
        b = op.bucket
        res = None
        if b == "map" or b == "broadcast":
            res = _direct(op, static_key, arrays, n)
        elif type(b) is tuple:
            res = _direct_reduce(op, static_key, arrays, n, b[1])
        if res is not None:
            return res
        p = plan(op, static_key, arrays, n)
        return None if p is None else forward(p)
    except Exception:  # noqa: BLE001 - the exact kernel runs the call, or raises the op's error
        return None


# random creation ops (no array inputs) whose draw for element i depends only on the key
# and i (jax's partitionable threefry, each element sampled on its own): the first n draws
# of a size class are the exact shape's draws, bit for bit (tests/ops/test_random_classes.py
# checks every op of this set; gamma-based samplers are not in it: their draws differ)
RANDOM_CLASSES = frozenset(
    {"_random_uniform", "_random_normal", "_random_exponential", "_random_poisson",
     "_random_randint"}
)  # fmt: skip


def run_random(op, static_key, arrays):
    """A random creation op on a shape it has not seen :data:`HOT` times: the draws of its
    size class (one program per class, not per shape), cut to the shape on the host.
    None: run the exact kernel."""
    if op.name not in RANDOM_CLASSES or not jax.config.jax_threefry_partitionable:
        return None
    if _count(op, static_key):
        return None
    try:
        i = op.static_names.index("shape")
        shape = tuple(static_key[i])
        size = math.prod(shape)
        if size == 0 or not shape:
            return None
        b = size_class(size)
        out = op.kernel((*static_key[:i], (b,), *static_key[i + 1 :]))(*arrays)
        STATS["runs"] += 1
        return to_device(np.asarray(out)[:size].reshape(shape), True)
    except Exception:  # noqa: BLE001 - the exact kernel runs the call, or raises the op's error
        return None


_GENERIC = LRU(1024, "size-class host programs of any shape")


def _direct(op, static_key, arrays, n):
    """An elementwise call whose family already has a generic host program: run it on
    the inputs as they are, without a plan. None: take the plan's path."""
    if len(arrays) == n:  # no dynamic attributes (the common case, kept short)
        ins, dyn = arrays, ()
        dtypes = (arrays[0].dtype,) if n == 1 else tuple([a.dtype for a in arrays])
    else:
        ins, dyn = arrays[:n], arrays[n:]
        dtypes = tuple([a.dtype for a in ins])
    fam = _map_key(op, static_key, dtypes, dyn)
    prog = _GENERIC.get(fam)
    if prog is None:
        return None
    views = host_views(ins)
    if views is None:
        return None
    hosts, checked = views
    shape = hosts[0].shape
    if n > 1 and any(h.shape != shape for h in hosts[1:]):
        if op.bucket != "broadcast":
            return None  # the exact kernel raises the op's own error
        shape = np.broadcast_shapes(*[h.shape for h in hosts])
    if math.prod(shape) == 0:
        return None
    try:
        out = prog.raw(*hosts, *dyn, checked=checked)[0]
    except _host.Unsupported:
        return None  # a subnormal value: the plan's path hands it to the compiled program
    STATS["runs"] += 1
    return to_device(out if out.shape == shape else np.broadcast_to(out, shape), True)


def _family(key):
    """A program key less its size class (a VJP's: its forward's, less the class)."""
    if key[0] == "vjp":
        return ("vjp", key[1][:-1], key[2])
    return key[:-1]


def generic(key, make, avals):
    """Program ``key`` when NumPy runs it on unpadded arrays of any shape
    (``HostProgram.generic``): one serves every class of its op, attributes and dtypes.
    None: it runs padded (compiled, or a host program tied to its class)."""
    fam = _family(key)
    prog = _GENERIC.get(fam)
    if prog is None:
        prog = program(key, make, avals)
        if type(prog) is not _host.HostProgram or not prog.generic:
            return None
        _GENERIC.put(fam, prog)
    return prog


def forward(p):
    """Run a plan: the call's result (a jax array of its exact shape), from the unpadded
    inputs where the program allows (:func:`generic`), else on the padded class."""
    prog = generic(p.key, p.make, p.avals)
    STATS["runs"] += 1
    if prog is not None:
        try:
            out = prog.raw(*p.raw, checked=p.checked)[0]
            p.out_spec = (p.out_cls, prog.out_specs[0][1])
            return to_device(p.raw_out(out), True)
        except _host.Unsupported:
            pass  # a subnormal value: the compiled program
    outs = execute(p.key, p.make, p.avals, p.args)
    p.out_spec = (outs[0].shape, outs[0].dtype)
    return to_device(p.unpad(outs)[0], True)


def unraw_input(p, k, g):
    """Input ``k``'s cotangent of exact shape from a generic VJP's unpadded one (a map
    plan's: of the output's shape, or rank 0; summed back over broadcast axes; a
    reduction's: of its input's ``(outer, reduced, inner)`` view, 1 where not spread)."""
    h = np.asarray(g)
    if p.key[0] == "reduce":  # of the (outer, reduced, inner) view, maybe not yet spread
        return p.unpad_in(k, np.broadcast_to(h, p.raw[0].shape))
    if h.shape != p.out_shape:
        h = np.broadcast_to(h, p.out_shape)
    if summed_back(p, k):
        return _unbroadcast(h, p.bcast[k])
    return h


def filled(shape, dtype, value):
    """``jnp.full`` without a program per shape (on the host path), for the backward."""
    return on_device(host_filled(shape, dtype, value))


class Host:
    """A cotangent that stays on the host between size-class VJPs (the node-by-node
    backward of ``autograd``): a NumPy array ``h``, and whether it holds no value
    XLA:CPU flushes (``checked``, as :func:`host_views`). It becomes a jax array
    (:meth:`device`) only where something other than a size-class VJP or :func:`add`
    reads it, such as a variable's gradient. A put costs about 4 us, and a backward
    makes one per input of every recorded op."""

    __slots__ = ("h", "checked")

    def __init__(self, h, checked):
        self.h, self.checked = h, checked

    @property
    def shape(self):
        return self.h.shape

    @property
    def dtype(self):
        return self.h.dtype

    def device(self):
        return to_device(self.h, self.checked)


def on_device(x):
    """``x`` as a jax array (a :class:`Host` value put on the device)."""
    return x.device() if type(x) is Host else x


def host_filled(shape, dtype, value):
    """:func:`filled`, as a :class:`Host` value on the host path."""
    if enabled() and jax.default_backend() == "cpu":
        return Host(np.full(shape, value, dtype), value in (0, 1))
    return jnp.full(shape, value, dtype)


def add(a, b):
    """``a + b`` of two arrays of one shape, on a size class while the shape is new. Two
    :class:`Host` values add on the host, by ``elemwise_add``'s generic program, into a
    :class:`Host` value."""
    from .registry import get

    op = get("elemwise_add")
    if type(a) is Host or type(b) is Host:
        if type(a) is type(b) and a.shape == b.shape and a.dtype == b.dtype:
            res = _host_add(op, a, b)
            if res is not None:
                return res
        a, b = on_device(a), on_device(b)
    if a.shape == b.shape and a.dtype == b.dtype:
        res = run(op, (), [a, b], 2)
        if res is not None:
            return res
    return a + b


def _host_add(op, a, b):
    size, dt = math.prod(a.shape), a.dtype
    if size == 0:
        return None
    b_cls = size_class(size)
    key = (*_map_key(op, (), (dt, dt), ()), b_cls)
    try:
        prog = generic(key, lambda: op.bound(()), lambda: (jax.ShapeDtypeStruct((b_cls,), dt),) * 2)
        if prog is None:
            return None
        return Host(prog.raw(a.h, b.h, checked=a.checked and b.checked)[0], True)
    except Exception:  # noqa: BLE001 - a subnormal value (Unsupported), or no host form
        return None
