"""Checking symbols and blocks: forward values, backward values, numeric gradients,
consistency across contexts/dtypes, and hybridized vs eager blocks.

These run through the public Symbol API (``bind``, ``simple_bind``, the Executor),
so they test a symbol the way an MXNet user runs it. A check asked to run in float64
(``dtype=np.float64``) turns jax's 64-bit mode on for its duration, so its arrays and
finite differences really are float64, as in MXNet (gluonjax otherwise computes in
float32 while jax's 64-bit mode is off).
"""

from __future__ import annotations

import contextlib
import functools
import time

import numpy as np

from ._compare import (
    assert_almost_equal,
    default_context,
    default_dtype,
    default_numeric_eps,
    get_tolerance,
    get_tols,
)

__all__ = [
    "simple_forward",
    "numeric_grad",
    "check_numeric_gradient",
    "check_symbolic_forward",
    "check_symbolic_backward",
    "check_consistency",
    "check_speed",
    "same_symbol_structure",
    "check_gluon_hybridize_consistency",
]

_FLOATS = (np.float16, np.float32, np.float64)


def _float64_scope(fn):
    """Run ``fn`` with jax's 64-bit mode on when its ``dtype`` argument is float64."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        import inspect

        import jax

        dtype = inspect.signature(fn).bind(*args, **kwargs).arguments.get("dtype")
        wide = dtype is not None and dtype != "asnumpy" and np.dtype(dtype) == np.float64
        scope = jax.enable_x64(True) if wide and not jax.config.jax_enable_x64 else None
        with scope if scope is not None else contextlib.nullcontext():
            return fn(*args, **kwargs)

    return wrapper


def _check_dtype(dtype, allow_asnumpy=True):
    if not ((allow_asnumpy and dtype == "asnumpy") or dtype in _FLOATS):
        raise ValueError(f"dtype must be float16/32/64{' or asnumpy' * allow_asnumpy}, got {dtype}")


def _nd(value, ctx, dtype):
    from .. import nd

    if isinstance(value, np.ndarray):
        return nd.array(value, ctx=ctx, dtype=value.dtype if dtype == "asnumpy" else dtype)
    return value


def _location(sym, location, ctx, dtype):
    """``location`` (list in ``list_arguments()`` order, or dict) as name -> NDArray."""
    names = sym.list_arguments()
    if isinstance(location, dict):
        if set(location) != set(names):
            raise ValueError(
                f"the keys of location {sorted(location)} do not match the symbol's "
                f"arguments {sorted(names)}"
            )
    elif isinstance(location, (list, tuple)):
        location = dict(zip(names, location))
    else:
        raise TypeError(f"location must be a list or dict, got {type(location).__name__}")
    return {k: _nd(location[k], ctx, dtype) for k in sorted(location)}


def _aux(sym, aux_states, ctx, dtype):
    if aux_states is None:
        return None
    names = sym.list_auxiliary_states()
    if isinstance(aux_states, dict):
        if set(aux_states) != set(names):
            raise ValueError(
                f"aux_states keys {sorted(aux_states)} do not match the symbol's auxiliary "
                f"states {sorted(names)}"
            )
    else:
        aux_states = dict(zip(names, aux_states))
    return {k: _nd(v, ctx, dtype) for k, v in aux_states.items()}


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Run ``sym`` on NumPy ``inputs`` (by argument name); NumPy output(s).

    Examples
    --------
    >>> import numpy as np
    >>> import gluonjax as mx
    >>> from gluonjax.test_utils import simple_forward
    >>> a = mx.sym.var('a')
    >>> simple_forward(a * 2, a=np.array([1.0, 2.0])).tolist()
    [2.0, 4.0]
    """
    from .. import nd

    ctx = ctx or default_context()
    exe = sym.bind(ctx, args={k: nd.array(v) for k, v in inputs.items()})
    exe.forward(is_train=is_train)
    outs = [o.asnumpy() for o in exe.outputs]
    return outs[0] if len(outs) == 1 else outs


def numeric_grad(
    executor, location, aux_states=None, eps=1e-4, use_forward_train=True, dtype=default_dtype()
):
    """Central finite differences of ``sum(executor.outputs[0])`` for every float argument.

    Parameters
    ----------
    executor : Executor
        A bound executor whose first output is differentiated.
    location : dict of str -> numpy.ndarray
        The point (every argument).
    aux_states : dict of str -> numpy.ndarray, optional
        Reset before every forward (BatchNorm statistics would drift otherwise).
    eps : float
        The step: ``(f(x + eps/2) - f(x - eps/2)) / eps``.

    Returns
    -------
    dict of str -> numpy.ndarray
    """
    _check_dtype(dtype, allow_asnumpy=False)
    grads = {k: np.zeros(np.shape(v), dtype=dtype) for k, v in location.items()}
    for k, v in location.items():
        executor.arg_dict[k][:] = np.asarray(v, dtype=dtype)
    location = {k: np.array(v, order="C") for k, v in location.items()}

    def run():
        if aux_states is not None:
            for key, val in aux_states.items():
                executor.aux_dict[key][:] = val
        executor.forward(is_train=use_forward_train)
        return executor.outputs[0].asnumpy()

    for k, v in location.items():
        if v.dtype.kind != "f":
            continue
        flat = v.reshape(-1)
        old = flat.copy()
        for i in range(flat.size):
            flat[i] = old[i] + eps / 2.0
            executor.arg_dict[k][:] = v.astype(dtype)
            f_plus = run()
            flat[i] = old[i] - eps / 2.0
            executor.arg_dict[k][:] = v.astype(dtype)
            f_minus = run()
            grads[k].reshape(-1)[i] = (f_plus - f_minus).sum() / eps
            flat[i] = old[i]
        executor.arg_dict[k][:] = v.astype(dtype)
    return grads


@_float64_scope
def check_numeric_gradient(
    sym,
    location,
    aux_states=None,
    numeric_eps=None,
    rtol=None,
    atol=None,
    grad_nodes=None,
    use_forward_train=True,
    ctx=None,
    grad_stype_dict=None,
    dtype=default_dtype(),
):
    """Compare ``sym``'s backward with finite differences.

    The symbol's first output is multiplied by a fixed random projection and made a
    loss; its gradient with respect to each of ``grad_nodes`` (all arguments by
    default; a dict gives each a ``grad_req`` of 'write', 'add' or 'null') must
    match central finite differences with step ``numeric_eps``.

    Parameters
    ----------
    sym : Symbol
    location : list or dict of numpy.ndarray
        The point: every argument of ``sym``.
    aux_states : list or dict of numpy.ndarray, optional
    numeric_eps : float, optional
        Default: 2**-9 for float32 outputs (2**-6 float16, 2**-14 float64).
    rtol, atol : float, optional
    grad_nodes : list, tuple or dict, optional
    use_forward_train : bool
        Forward in training mode for the finite differences.
    ctx : Context, optional
    grad_stype_dict : dict, optional
        Storage type of gradient arrays (sparse needs ``nd.sparse``).
    dtype : float16/32/64
        dtype of the arrays built from ``location``.

    Examples
    --------
    >>> import numpy as np
    >>> import gluonjax as mx
    >>> from gluonjax.test_utils import check_numeric_gradient
    >>> x = mx.sym.var('x')
    >>> check_numeric_gradient(mx.sym.square(x), [np.array([[1.0, -2.0]])], rtol=1e-2, atol=1e-2)
    """
    from .. import nd
    from .. import sym as _sym

    _check_dtype(dtype, allow_asnumpy=False)
    ctx = ctx or default_context()
    loc = _location(sym, location, ctx, dtype)
    loc_np = {k: v.asnumpy() for k, v in loc.items()}
    aux = _aux(sym, aux_states, ctx, dtype)
    aux_np = None if aux is None else {k: v.asnumpy() for k, v in aux.items()}
    if grad_nodes is None:
        grad_nodes = sym.list_arguments()
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, (list, tuple)):
        grad_nodes = list(grad_nodes)
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, dict):
        grad_req = dict(grad_nodes)
        grad_nodes = list(grad_nodes)
    else:
        raise ValueError(f"grad_nodes must be a list, tuple or dict, got {type(grad_nodes)}")

    _, out_shapes, _ = sym.infer_shape(**{k: v.shape for k, v in loc.items()})
    proj = _sym.Variable("__random_proj")
    loss = _sym.make_loss(sym * proj)
    loc["__random_proj"] = nd.array(np.random.rand(*out_shapes[0]) + 0.1, ctx=ctx, dtype=dtype)
    old_grads = {k: np.random.normal(0, 0.01, size=loc[k].shape) for k in grad_nodes}
    old_grads["__random_proj"] = np.random.normal(0, 0.01, size=out_shapes[0])
    args_grad = {k: nd.array(v, ctx=ctx, dtype=dtype) for k, v in old_grads.items()}
    for k, st in (grad_stype_dict or {}).items():
        if k in args_grad and st not in (None, "default"):
            g = args_grad[k]
            args_grad[k] = nd.zeros(g.shape, ctx=g.context, dtype=g.dtype, stype=st)
    exe = loss.bind(ctx, grad_req=grad_req, args=loc, args_grad=args_grad, aux_states=aux)
    exe.forward(is_train=True)
    eps = get_tolerance(exe.outputs[0], numeric_eps, default_numeric_eps())
    if dtype in (np.float32, np.float16) and eps < 1e-5:
        raise ValueError(f"numeric_eps={eps} is too small for {np.dtype(dtype).name}")
    exe.backward()
    symbolic = exe.grad_dict
    numeric = numeric_grad(
        exe, loc_np, aux_np, eps=eps, use_forward_train=use_forward_train, dtype=dtype
    )
    for name in grad_nodes:
        names = (f"NUMERICAL_{name}", f"BACKWARD_{name}")
        got = symbolic[name].asnumpy()
        req = grad_req[name]
        if req == "write":
            assert_almost_equal(numeric[name], got, rtol, atol, names)
        elif req == "add":
            assert_almost_equal(numeric[name], got - old_grads[name], rtol, atol, names)
        elif req == "null":
            assert_almost_equal(old_grads[name], got, rtol, atol, names)
        else:
            raise ValueError(f"invalid grad_req {req!r} for argument {name}")


@_float64_scope
def check_symbolic_forward(
    sym,
    location,
    expected,
    rtol=None,
    atol=None,
    aux_states=None,
    ctx=None,
    equal_nan=False,
    dtype=default_dtype(),
):
    """Run ``sym`` forward (predict mode) at ``location`` and compare with ``expected``.

    ``location`` is a list (``list_arguments()`` order) or dict of NumPy arrays;
    ``expected`` a list of outputs or a dict by output name. Returns the outputs.

    Examples
    --------
    >>> import numpy as np
    >>> import gluonjax as mx
    >>> from gluonjax.test_utils import check_symbolic_forward
    >>> a, b = mx.sym.var('a'), mx.sym.var('b')
    >>> m1, m2 = np.array([[1, 2], [3, 4]]), np.array([[5, 6], [7, 8]])
    >>> _ = check_symbolic_forward(mx.sym.dot(a, b), [m1, m2], [m1 @ m2])
    """
    _check_dtype(dtype)
    ctx = ctx or default_context()
    loc = _location(sym, location, ctx, dtype)
    aux = _aux(sym, aux_states, ctx, dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    from .. import nd

    grads = {k: nd.zeros(v.shape, ctx=ctx, dtype=v.dtype) for k, v in loc.items()}
    exe = sym.bind(ctx=ctx, args=loc, args_grad=grads, aux_states=aux)
    exe.forward(is_train=False)
    for name, want, got in zip(sym.list_outputs(), expected, exe.outputs):
        assert_almost_equal(
            want, got, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"), equal_nan=equal_nan
        )
    return exe.outputs


@_float64_scope
def check_symbolic_backward(
    sym,
    location,
    out_grads,
    expected,
    rtol=None,
    atol=None,
    aux_states=None,
    grad_req="write",
    ctx=None,
    grad_stypes=None,
    equal_nan=False,
    dtype=default_dtype(),
):
    """Run ``sym`` forward (training) and backward with ``out_grads``; compare the
    argument gradients with ``expected`` (list in argument order, or dict by name).

    ``grad_req`` ('write', 'add', 'null', or per argument) is honoured: with 'add'
    the gradient buffers start from random values that are subtracted before the
    comparison, with 'null' they must stay untouched. Returns the gradient arrays.

    Examples
    --------
    >>> import numpy as np
    >>> import gluonjax as mx
    >>> from gluonjax.test_utils import check_symbolic_backward
    >>> a, b = mx.sym.var('a'), mx.sym.var('b')
    >>> m1, m2 = np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]])
    >>> _ = check_symbolic_backward(a * b, [m1, m2], [np.ones((1, 2))], [m2, m1])
    """
    from .. import nd

    _check_dtype(dtype)
    ctx = ctx or default_context()
    loc = _location(sym, location, ctx, dtype)
    aux = _aux(sym, aux_states, ctx, dtype)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(sym.list_arguments(), expected))
    old = {k: np.random.normal(size=np.shape(expected[k])) for k in sorted(expected)}
    args_grad = {}
    for k, v in old.items():
        dt = np.asarray(expected[k]).dtype if dtype == "asnumpy" else dtype
        st = (grad_stypes or {}).get(k)
        if st not in (None, "default"):
            args_grad[k] = nd.zeros(v.shape, ctx=ctx, dtype=dt, stype=st)
        else:
            args_grad[k] = nd.array(v, ctx=ctx, dtype=dt)
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in sym.list_arguments()}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(sym.list_arguments(), grad_req))
    exe = sym.bind(ctx=ctx, args=loc, args_grad=args_grad, aux_states=aux, grad_req=grad_req)
    exe.forward(is_train=True)
    if isinstance(out_grads, (list, tuple)):
        out_grads = [_nd(g, ctx, dtype) for g in out_grads]
    elif isinstance(out_grads, dict):
        out_grads = {k: _nd(g, ctx, dtype) for k, g in out_grads.items()}
    elif out_grads is not None:
        raise TypeError(f"out_grads must be a list, dict or None, got {type(out_grads)}")
    exe.backward(out_grads)
    for name in expected:
        names = (f"EXPECTED_{name}", f"BACKWARD_{name}")
        got = args_grad[name]
        req = grad_req[name]
        if req == "write":
            assert_almost_equal(expected[name], got, rtol, atol, names, equal_nan=equal_nan)
        elif req == "add":
            assert_almost_equal(
                expected[name], got.asnumpy() - old[name], rtol, atol, names, equal_nan=equal_nan
            )
        elif req == "null":
            assert_almost_equal(old[name], got, rtol, atol, names, equal_nan=equal_nan)
        else:
            raise ValueError(f"invalid grad_req {req!r} for argument {name}")
    return args_grad


def _smaller_dtype(dt1, dt2):
    return dt1 if dt2 is None or np.dtype(dt1).itemsize < np.dtype(dt2).itemsize else dt2


def check_consistency(
    sym,
    ctx_list,
    scale=1.0,
    grad_req="write",
    arg_params=None,
    aux_params=None,
    rtol=None,
    atol=None,
    raise_on_err=True,
    ground_truth=None,
    equal_nan=False,
    use_uniform=False,
    rand_type=np.float64,
):
    """Check that ``sym`` gives the same outputs and gradients under several settings.

    ``ctx_list`` holds ``simple_bind`` keyword dicts (``{'ctx': mx.cpu(0), 'data':
    (2, 3), 'type_dict': {'data': np.float16}}``...). Every executor gets the same
    random inputs; the most precise one (largest output dtype) is the reference,
    unless ``ground_truth`` (output/argument name -> array) is given. Returns the
    reference values.
    """
    from .. import nd
    from ..symbol import Symbol

    if len(ctx_list) < 2:
        raise ValueError("check_consistency needs at least two settings in ctx_list")
    syms = [sym] * len(ctx_list) if isinstance(sym, Symbol) else list(sym)
    if len(syms) != len(ctx_list):
        raise ValueError(f"{len(syms)} symbols for {len(ctx_list)} settings")
    out_names = syms[0].list_outputs()
    arg_names = syms[0].list_arguments()
    exes = []
    for s, kw in zip(syms, ctx_list):
        if s.list_arguments() != arg_names or s.list_outputs() != out_names:
            raise ValueError("the symbols of check_consistency must share arguments and outputs")
        exes.append(s.simple_bind(grad_req=grad_req, **kw))
    arg_params = {} if arg_params is None else arg_params
    aux_params = {} if aux_params is None else aux_params
    for n, arr in sorted(exes[0].arg_dict.items()):
        if n not in arg_params:
            if use_uniform:
                arg_params[n] = np.random.uniform(-0.92 * scale, 0.92 * scale, arr.shape)
            else:
                arg_params[n] = np.random.normal(size=arr.shape, scale=scale)
            arg_params[n] = arg_params[n].astype(rand_type)
    for n in exes[0].aux_dict:
        aux_params.setdefault(n, 0)
    for exe in exes:
        for name, arr in exe.arg_dict.items():
            arr[:] = arg_params[name]
        for name, arr in exe.aux_dict.items():
            arr[:] = aux_params[name]
        if grad_req == "add":
            for arr in exe.grad_arrays:
                if arr is not None:
                    arr[:] = 0
    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exes]
    gt_idx = int(np.argmax([d.itemsize for d in dtypes]))
    gt = ground_truth
    if gt is None:
        gt = dict(exes[gt_idx].output_dict)
        if grad_req != "null":
            gt.update(exes[gt_idx].grad_dict)

    def compare(arr, want, rt, at, what):
        try:
            assert_almost_equal(arr, want, rtol=rt, atol=at, equal_nan=equal_nan)
        except AssertionError as err:
            if raise_on_err:
                raise AssertionError(f"{what}: {err}") from None
            print(f"{what}: {err}")

    for exe in exes:
        exe.forward(is_train=False)
    for i, exe in enumerate(exes):
        if i != gt_idx:
            for name, arr in zip(out_names, exe.outputs):
                compare(arr, gt[name], rtol, atol, f"predict: setting {i} vs {gt_idx} at {name}")
    if grad_req != "null":
        for exe in exes:
            exe.forward(is_train=True)
        least = [o.dtype for o in exes[0].outputs]
        for exe in exes:
            least = [_smaller_dtype(o.dtype, d) for o, d in zip(exe.outputs, least)]
        heads = [o.astype(d).asnumpy() for o, d in zip(exes[0].outputs, least)]
        for exe in exes:
            exe.backward(
                [nd.array(h, ctx=exe._ctx, dtype=o.dtype) for h, o in zip(heads, exe.outputs)]
            )
        for i, exe in enumerate(exes):
            if i == gt_idx:
                continue
            for name, arr in zip(out_names + arg_names, exe.outputs + exe.grad_arrays):
                want = gt.get(name)
                if want is None:
                    continue
                rt, at = rtol, atol
                small_a = _smaller_dtype(arr.dtype, dtypes[i])
                small_g = _smaller_dtype(want.dtype, dtypes[gt_idx])
                if small_a != arr.dtype or small_g != want.dtype:
                    rt, at = get_tols(arr.astype(small_a), want.astype(small_g), rtol, atol)
                compare(arr, want, rt, at, f"train: setting {i} vs {gt_idx} at {name}")
    return gt


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ="whole", **kwargs):
    """Seconds per forward+backward (``typ='whole'``) or forward (``'forward'``) of ``sym``."""
    from .. import nd

    ctx = ctx or default_context()
    grad_req = grad_req or "write"
    if location is None:
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **kwargs)
        location = {k: np.random.normal(size=a.shape) for k, a in exe.arg_dict.items()}
    else:
        exe = sym.simple_bind(
            grad_req=grad_req, ctx=ctx, **{k: v.shape for k, v in location.items()}
        )
    for name, value in location.items():
        exe.arg_dict[name][:] = value.astype(exe.arg_dict[name].dtype)
    if typ not in ("whole", "forward"):
        raise ValueError(f"typ must be 'whole' or 'forward', got {typ!r}")
    train = typ == "whole"

    def step():
        exe.forward(is_train=train)
        if train:
            exe.backward(out_grads=exe.outputs)

    step()
    nd.waitall()
    tic = time.time()
    for _ in range(N):
        step()
    nd.waitall()
    return (time.time() - tic) / N


def same_symbol_structure(sym1, sym2):
    """True if the two symbols' JSON graphs have the same op at every node position."""
    import json

    n1 = json.loads(sym1.tojson())["nodes"]
    n2 = json.loads(sym2.tojson())["nodes"]
    return all(a["op"] == b["op"] for a, b in zip(n1, n2))


def check_gluon_hybridize_consistency(
    net_builder, data_l, numpy_func=None, test_grad=True, rtol=1e-4, atol=1e-4
):
    """Check a HybridBlock gives the same outputs (and input gradients) eager and hybridized.

    ``net_builder(prefix=...)`` builds the block; all four runs (eager/hybridized, with
    and without autograd) start from the parameters of the first. ``numpy_func``, if
    given, is the expected output as a function of the NumPy inputs.
    """
    from .. import autograd, init

    class _FromNumpy(init.Initializer):
        def __init__(self, values):
            super().__init__()
            self._values = values

        def _init_weight(self, name, arr):
            arr[:] = self._values[name]

    saved_out, saved_grads, params_init = None, None, None
    for hybridize in (False, True):
        for use_autograd in [False, True] if test_grad else [False]:
            net = net_builder(prefix="net_")
            net.initialize(params_init) if params_init is not None else net.initialize()
            if hybridize:
                net.hybridize()
            inputs = [x.copy() for x in data_l]
            if use_autograd:
                for x in inputs:
                    x.attach_grad()
                with autograd.record():
                    out = net(*inputs)
                out.backward(out)
            else:
                out = net(*inputs)
            if params_init is None:
                params_init = _FromNumpy(
                    {k: v.data().asnumpy() for k, v in net.collect_params().items()}
                )
            if saved_out is None:
                saved_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), saved_out, rtol=rtol, atol=atol)
            if use_autograd:
                grads = [x.grad.asnumpy() for x in inputs]
                if saved_grads is None:
                    saved_grads = grads
                else:
                    for g, s in zip(grads, saved_grads):
                        assert_almost_equal(g, s, rtol=rtol, atol=atol)
    if numpy_func is not None:
        assert_almost_equal(
            saved_out, numpy_func(*[x.asnumpy() for x in data_l]), rtol=rtol, atol=atol
        )
