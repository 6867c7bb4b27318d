"""HybridBlock: a block that can be compiled whole with ``jax.jit`` (``hybridize()``)."""

from __future__ import annotations

import contextlib
import io
import logging

from .._caches import PROCESS
from .._rng import NeedsKey
from .._tape import state as _state
from .._tape.node import inexact, int_grad
from ..base import DeferredInitializationError, HostOnlyError, MXNetError
from ..ndarray.ndarray import NDArray
from ..util import legacy_shapes
from . import _forward_check as _fc
from . import _np_mode as _npm
from ._cached import EAGER as _EAGER
from ._cached import CachedGraph
from ._fast import NEW as _NEW
from .block import Block, to_ndarray
from .parameter import Parameter

_log = logging.getLogger(__name__)

__all__ = ["HybridBlock"]

_STATE = _state._local  # per-thread: trace scope, autograd flags, their call_mode
_NO_ARG = object()  # HybridBlock.__call__ without positional arguments


def _sym():
    from .. import symbol

    return symbol


def _nd():
    from .. import ndarray

    return ndarray


def _int_grad_inputs(args):
    return any(isinstance(a, NDArray) and not inexact(a.dtype) and int_grad(a) for a in args)


class HybridBlock(Block):
    """A Block whose forward is made of registry ops, so it can be hybridized.

    Define ``hybrid_forward(self, F, x, *args, **params)``: ``F`` is ``mx.nd`` when
    run eagerly and ``mx.sym`` while traced; this block's parameters arrive as
    keyword arguments by name. Or define ``forward(self, x)`` with NDArray /
    ``jax.numpy`` code (Gluon 2 style). Both hybridize.

    Examples
    --------
    >>> import gluonjax as mx
    >>> class Net(mx.gluon.HybridBlock):
    ...     def __init__(self, **kw):
    ...         super().__init__(**kw)
    ...         with self.name_scope():
    ...             self.hidden = mx.gluon.nn.Dense(4)
    ...     def hybrid_forward(self, F, x):
    ...         return F.relu(self.hidden(x))
    >>> net = Net(); net.initialize(); net.hybridize()
    >>> net(mx.nd.ones((2, 3))).shape
    (2, 4)
    """

    # Built-in layers set ``_auto_jit = True``: their eager calls (and those of
    # containers made only of such layers, without hooks) run as one compiled call.
    # User code is never compiled behind the user's back: the flag only counts for
    # classes defined inside gluonjax, not for user subclasses.
    _auto_jit = False
    _host_only = False  # the forward calls a value-dependent function: it runs op by op

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix, params)
        self._active = False
        self._flags = {}
        self._cached = None
        self._fast = None  # cached.fast while hybridized, hook-free and key-free
        self._own_cache = None
        self._auto_state = (-1, False)

    def __setattr__(self, name, value):
        if isinstance(value, (Block, Parameter)):
            object.__setattr__(self, "_cached", None)
            object.__setattr__(self, "_fast", None)
            object.__setattr__(self, "_own_cache", None)
        super().__setattr__(name, value)

    def hybridize(self, active=True, static_alloc=False, static_shape=False, **kwargs):
        """Compile the forward with ``jax.jit`` (``active=False`` returns to eager).

        ``static_alloc``/``static_shape`` are accepted for compatibility: XLA always
        plans memory statically and a compiled call never reallocates in Python;
        jax retraces only when the input shapes, dtypes or train/predict mode change.
        """
        self._active = bool(active)
        self._host_only = False
        self._flags = dict(static_alloc=static_alloc, static_shape=static_shape, **kwargs)
        self._cached = None
        self._fast = None
        for child in self._children.values():
            child.hybridize(active, static_alloc=static_alloc, static_shape=static_shape, **kwargs)

    def _clear_cached(self):
        self._cached = None
        self._fast = None

    def _clear_cached_op(self):
        """Drop the compiled forward: the next call traces again, with the block's attributes
        as they are then. MXNet's name; gluoncv's detectors call it after changing a plain
        attribute (``set_nms``, ``reset_class``)."""
        self._clear_cached()

    # ------------------------------------------------------------ calling
    def __call__(self, x=_NO_ARG, /, *args, **kwargs):
        f = self._fast
        if f is not None and type(x) is NDArray and not args and not kwargs and x._ctx is None:
            mode = _STATE.call_mode  # 2 while recording or tracing
            if mode != 2:  # the hybridized hot path, inline (see _fast.FastCall)
                if f.seen != PROCESS.param_version:
                    f.refresh()
                try:
                    out = f.plain[mode](f.pvals, x._data)
                except NeedsKey:
                    return f.needs_key(x)
                if type(out) is f.array_type:
                    res = _NEW(NDArray)
                    res._data = out
                    return res
                return f.finish(out)
        if x is not _NO_ARG:
            args = (x, *args)
        cached = self._cached
        if (
            (self._active or (PROCESS.auto_jit and self._can_auto_jit()))
            and not kwargs
            and _STATE.scope is None
        ):
            if args and not isinstance(args[0], NDArray) and hasattr(args[0], "_outputs"):
                _fc.check_inputs(self, args)
                return super().__call__(*args)
            if self.__dict__.get("_nested_fmt") is None and any(
                isinstance(a, (list, tuple)) for a in args
            ):
                return self._call_nested(args)
            if (_state.is_recording() and _int_grad_inputs(args)) or self._host_only:
                # integer inputs that take part in differentiation (MXNet gives them
                # gradients): the op-by-op path has their float stand-ins; the compiled
                # call has no integer cotangents, so this call runs eagerly. A forward
                # calling a value-dependent function (np.unique...) runs op by op too.
                return _npm.finish(self, Block.__call__(self, *args))
            if cached is None:
                cached = self._build(args)
                cached.np_mode = _npm.np_inputs(args)
            try:
                return self._call_cached(cached, args, f)
            except HostOnlyError as err:  # (an enclosing hybridized block falls back too)
                self._host_only = True
                self._clear_cached()
                _log.info("%s: block '%s' runs op by op", err, self.name)
                return _npm.finish(self, Block.__call__(self, *args))

        if _STATE.scope is not None:
            if self._gluon2_style():
                args = tuple(_as_ndarray(a) for a in args)
            return _npm.finish(self, super().__call__(*args, **kwargs))
        if args and hasattr(args[0], "_outputs"):  # a symbolic call
            _fc.check_inputs(self, args)
            return super().__call__(*args, **kwargs)
        # eager: the same rules as a hybridized call (see _forward_check)
        _fc.check_inputs(self, args)
        before = _fc.snapshot(args)
        out = super().__call__(*args, **kwargs)
        _fc.restore_and_check(self, args, before)
        out = _npm.finish(self, out)
        return out if type(out) is NDArray else _fc.check_output(self, out, "eager")

    def _call_nested(self, args):
        """A hybridized call with (nested) lists of arrays among its inputs: the compiled
        forward takes the flat arrays and ``hybrid_forward`` gets them regrouped (MXNet
        flattens the inputs the same way); a new nesting builds a new graph."""
        _fc.check_inputs(self, args)  # errors name the caller's (nested) input position
        flat, fmt = _flatten_inputs(args)
        if self.__dict__.get("_in_fmt") != fmt:
            self._clear_cached()
            object.__setattr__(self, "_in_fmt", fmt)
        object.__setattr__(self, "_nested_fmt", fmt)
        try:
            return self(*flat)
        finally:
            object.__setattr__(self, "_nested_fmt", None)

    def _regroup_inputs(self, inputs):
        fmt = self.__dict__.get("_nested_fmt")
        return list(inputs) if fmt is None else _regroup_inputs(list(inputs), fmt)

    def _call_cached(self, cached, args, f):
        if self._forward_pre_hooks or self._forward_hooks:
            for hook in list(self._forward_pre_hooks.values()):
                hook(self, args)
            out = cached(args)
            if out is _EAGER:
                out = _npm.finish(self, Block.__call__(self, *args))
            elif cached.out_np or _npm.builtin_in_np_mode(self):
                out = _npm.to_np(out)
            for hook in list(self._forward_hooks.values()):
                hook(self, args, out)
            return out
        out = cached(args)
        if out is _EAGER:  # integer outputs under record(): gradients need the op-by-op tape
            return _npm.finish(self, Block.__call__(self, *args))
        if cached.out_np or _npm.builtin_in_np_mode(self):
            return _npm.to_np(out)
        if self._active and f is None and not cached.uses_random and not cached.multi:
            self._fast = cached.fast
        return out

    def _can_auto_jit(self):
        epoch, ok = self._auto_state
        if epoch == PROCESS.structure_epoch:
            return ok
        ok = (
            type(self)._auto_jit
            and type(self).__module__.startswith("gluonjax.")
            and not self._forward_hooks
            and not self._forward_pre_hooks
            and all(
                isinstance(c, HybridBlock) and c._can_auto_jit() for c in self._children.values()
            )
        )
        self._auto_state = (PROCESS.structure_epoch, ok)
        return ok

    def _gluon2_style(self):
        return type(self).forward is not HybridBlock.forward

    def _build(self, args):
        _fc.check_hybrid_inputs(self, args)
        args = [to_ndarray(a) for a in args]
        if any(p._data is None for p in self._all_params()):
            self._deferred_init(args)
        for p in self._all_params():
            p._check()
        self._cached = CachedGraph(
            self, **{k: v for k, v in self._flags.items() if k == "static_alloc"}
        )
        # what export() traces with when no example inputs are given
        self._cached.input_signature = [
            None if a is None else (tuple(a.shape), a.dtype) for a in args
        ]
        return self._cached

    def _traced_forward(self, *args):
        return self.forward(*args)

    # ------------------------------------------------------------ deferred init
    def _deferred_init(self, args):
        """Give every deferred parameter its shape, from the input shapes."""
        if getattr(self, "_in_deferred_init", False):
            self._raise_uninferred()
        object.__setattr__(self, "_in_deferred_init", True)
        try:
            try:
                # MXNet runs hybrid_forward once to build the graph it infers shapes on,
                # then never again for that input; here the compiled trace that follows
                # runs it too, so this extra symbolic pass stays silent (one print, as MXNet)
                with contextlib.redirect_stdout(io.StringIO()), legacy_shapes():
                    self._infer_shapes_symbolically(args)
            except (MXNetError, TypeError, ValueError, AttributeError):
                pass  # the eager pass below decides (sym.np has no np.unique, for one)
            if any(p._data is None and p._deferred is not None for p in self._all_params()):
                with _state.pause(train_mode=False):
                    Block.__call__(self, *args)  # children infer from their own inputs
        finally:
            object.__setattr__(self, "_in_deferred_init", False)
        self._raise_uninferred()

    def _raise_uninferred(self):
        missing = [f"{p.name}: {p.shape}" for p in self._all_params() if p._data is None]
        if missing:
            raise DeferredInitializationError(
                f"Deferred initialization failed because shape cannot be inferred for "
                f"{type(self).__name__} '{self.name}': {missing}. Give these parameters full "
                f"shapes (e.g. in_units=/in_channels=), or call initialize() if you have not."
            )

    def _infer_shapes_symbolically(self, args):
        sym = _sym()
        flat, fmt = _flatten_inputs(args)  # (an RNN layer's begin state is a list)
        if any(not isinstance(a, NDArray) for a in flat) or self._gluon2_style():
            raise MXNetError("symbolic shape inference needs NDArray inputs and hybrid_forward")
        names = ["data"] if len(flat) == 1 else [f"data{i}" for i in range(len(flat))]
        out = self.forward(*_regroup_inputs([sym.var(n) for n in names], fmt))
        outs = out if isinstance(out, (list, tuple)) else [out]
        grouped = sym.Group(_flatten_inputs(outs)[0])  # a cell returns (output, [states])
        used = set(grouped.list_arguments())  # (a layer may make its own state inputs)
        shapes = {n: a.shape for n, a in zip(names, flat) if n in used}
        arg_s, _, aux_s = grouped.infer_shape_partial(**shapes)
        found = dict(zip(grouped.list_arguments(), arg_s))
        found.update(zip(grouped.list_auxiliary_states(), aux_s))
        for p in self._all_params():
            shape = found.get(p.name)
            if p._data is None and shape and all(d > 0 for d in shape):
                p._finish_deferred_init(shape)

    # ------------------------------------------------------------ forward
    def _own(self):
        own = self._own_cache
        if own is None:
            own = self._own_cache = self._own_params()
        return own

    def forward(self, x, *args):
        """Run ``hybrid_forward`` with ``F`` = nd (eager) or sym (traced / symbolic)."""
        if hasattr(x, "_outputs"):
            return self._symbol_forward(x, *args)
        scope = _state.current()
        np_mode = _npm.np_call()
        if scope is not None and not np_mode:
            return self._traced_symbol_forward(scope, x, *args)
        x = to_ndarray(x)
        args = tuple(to_ndarray(a) for a in args)
        if self._active and scope is None:  # net.forward(x) on a hybridized net: export
            # reads the shapes of this call, as after net(x) (MXNet exports after either)
            self.__dict__["_forward_signature"] = [
                None if a is None else (tuple(a.shape), a.dtype) for a in (x, *args)
            ]
        own = self._own()
        if scope is None and any(p._data is None for p in own.values()):
            self._deferred_init([x, *args])
        params = {
            k: p._array_for_input(x.context) if p._copies else p.data() for k, p in own.items()
        }
        if np_mode:  # F.np / F.npx on arrays, eager and traced alike
            x, args = _npm.np_view(x), tuple(_npm.np_view(a) for a in args)
            params = {k: _npm.np_view(v) for k, v in params.items()}
        return self.hybrid_forward(_nd(), *self._regroup_inputs([x, *args]), **params)

    def _symbol_forward(self, x, *args):
        sym = _sym()
        if x._value is not None:  # a traced symbol from a parent's hybrid_forward
            scope = _state.current()
            return self._traced_symbol_forward(scope, x, *args)
        with self.name_scope():
            params = {k: p.var() for k, p in self._own().items()}
            return self.hybrid_forward(sym, *self._regroup_inputs([x, *args]), **params)

    def _traced_symbol_forward(self, scope, x, *args):
        sym = _sym()
        inputs = [x, *args]
        single = len(inputs) == 1
        syms = []
        for i, a in enumerate(inputs):
            if hasattr(a, "_outputs") or a is None:
                syms.append(a)
            else:
                raw = getattr(a, "_data", a)
                s = sym.var("data" if single else f"data{i}")
                s._value = raw
                syms.append(s)
        params = {}
        for k, p in self._own().items():
            w = scope.by_id.get(id(p))
            if w is None:
                raise MXNetError(f"Parameter '{p.name}' is not part of the traced block")
            s = p.var()
            s = sym.Symbol(s._outputs, value=w._data)
            s._param = p
            params[k] = s
        with self.name_scope():
            out = self.hybrid_forward(sym, *self._regroup_inputs(syms), **params)
        for i, (a, s) in enumerate(zip(inputs, syms)):  # once per trace
            if s is not a and s is not None and s._value is not getattr(a, "_data", a):
                raise _fc.input_write_error(self, i, getattr(a, "shape", ()), "hybridized")
        for k, p in self._own().items():
            w = scope.by_id[id(p)]
            if params[k]._value is not w._data:
                w._data = params[k]._value
        return out

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError(
            f"{type(self).__name__} must define hybrid_forward(self, F, x, ...) or forward(self, x)"
        )

    # ------------------------------------------------------------ export hooks
    def infer_shape(self, *args):
        """Infer deferred parameter shapes from example inputs."""
        self._deferred_init([to_ndarray(a) for a in args])

    def export(self, path, epoch=0, remove_amp_cast=True, example_inputs=None, **kwargs):
        """Save ``path-symbol.json``, ``path-%04d.params`` and a StableHLO artifact.

        Run the block once first (or pass ``example_inputs=[x]``). Parameters are
        named by structural name ('0.weight'); ``path-%04d.stablehlo`` with its
        ``.manifest.json`` runs with :mod:`gluonjax.deploy` and only jax. Keyword
        options: ``stablehlo=True``, ``dynamic_batch=None`` (symbolic batch when the forward
        allows it, else the example's with a warning; True requires it), ``stablehlo_text=False``
        (also ``path-%04d.mlir``), ``iree=False`` (fixed-batch IREE module).
        Returns the list of files written.
        """
        from ._export import export_block

        return export_block(self, path, epoch, remove_amp_cast, example_inputs, **kwargs)


def _as_ndarray(a):
    v = getattr(a, "_value", None)
    if v is not None and hasattr(a, "_outputs"):
        return NDArray(v)
    return a


def _flatten_inputs(args):
    """``(flat list, format)`` of (nested) list/tuple inputs: format 0 for a leaf."""
    flat, fmt = [], []
    for a in args:
        if isinstance(a, (list, tuple)):
            sub, sub_fmt = _flatten_inputs(a)
            flat.extend(sub)
            fmt.append((type(a), sub_fmt))
        else:
            flat.append(a)
            fmt.append(0)
    return flat, tuple(fmt)


def _regroup_inputs(flat, fmt):
    """The nested inputs :func:`_flatten_inputs` flattened, rebuilt from ``flat``."""
    out = []
    for f in fmt:
        if f == 0:
            out.append(flat.pop(0))
        else:
            kind, sub = f
            out.append(kind(_regroup_inputs(flat, sub)))
    return out
