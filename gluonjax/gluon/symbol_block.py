"""SymbolBlock: a HybridBlock made from a Symbol graph (``SymbolBlock.imports``).

The graph's arguments that are not inputs become Parameters named after their
variables, its auxiliary states Parameters with ``grad_req='null'``. Eagerly the
graph runs node by node through the ``nd`` path (each op on the autograd tape);
hybridized it runs as one :func:`gluonjax.symbol._eval.graph_function` inside the
block's ``jax.jit``; on Symbols it returns the graph composed on them.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import autograd as _ag
from .._tape import state as _trace
from ..base import DeferredInitializationError, MXNetError
from ..ndarray.ndarray import NDArray
from ._param_sparse import StorageTypeError
from .block import to_ndarray
from .hybrid import HybridBlock
from .parameter_dict import ParameterDict

__all__ = ["SymbolBlock"]


def _sym():
    from .. import symbol

    return symbol


def _common_prefix(names):
    """The longest common prefix of ``names`` (MXNet strips it for structural names)."""
    if not names:
        return ""
    prefix = names[0]
    for n in names[1:]:
        i = 0
        while i < len(prefix) and i < len(n) and prefix[i] == n[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


def _flatten_symbols(x, what):
    if hasattr(x, "_outputs"):
        return [x]
    if isinstance(x, (list, tuple)):
        out = []
        for v in x:
            out.extend(_flatten_symbols(v, what))
        return out
    raise MXNetError(
        f"SymbolBlock {what} must be Symbols (or lists of them), got {type(x).__name__}"
    )


class SymbolBlock(HybridBlock):
    """A block running a Symbol graph.

    Parameters
    ----------
    outputs : Symbol or list of Symbol
        The graph's outputs (several give a list of outputs).
    inputs : Symbol or list of Symbol
        Input variables, in call order.
    params : ParameterDict, optional
        Parameters to reuse (by variable name) instead of creating new ones.

    Examples
    --------
    >>> import gluonjax as mx
    >>> data = mx.sym.var('data')
    >>> out = mx.sym.FullyConnected(data, num_hidden=2, name='fc')
    >>> net = mx.gluon.SymbolBlock(out, data)
    >>> net.initialize()
    >>> net(mx.nd.ones((3, 4))).shape
    (3, 2)
    >>> sorted(net.collect_params().keys())
    ['fc_bias', 'fc_weight']
    """

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)  # named symbolblock<N>, as in MXNet
        object.__setattr__(self, "_prefix", "")
        self._empty_prefix = True
        self._params = ParameterDict("", params)
        ins = _flatten_symbols(inputs, "inputs")
        outs = _flatten_symbols(outputs, "outputs")
        sym = _sym()
        for s in ins:
            nodes = s._outputs
            if len(nodes) != 1 or nodes[0][0].op is not None:
                raise MXNetError(
                    f"Input symbols must be variables, but {s!r} is an output of an operator"
                )
        for o in outs:  # as in MXNet: a row_sparse parameter cannot live in a SymbolBlock
            for node in o.get_internals():
                if node.attr("__storage_type__") == "1":
                    raise StorageTypeError(
                        f"SymbolBlock doesn't support Parameter '{node.name}' because its "
                        f"storage type is 'row_sparse'."
                    )
        self._graph = sym.Group(outs)
        self._multi = len(self._graph._outputs) > 1 or (
            isinstance(outputs, (list, tuple)) and len(outs) > 1
        )
        self._input_names = [s.name for s in ins]
        if len(set(self._input_names)) != len(self._input_names):
            raise MXNetError(
                f"SymbolBlock inputs must be distinct variables, got {self._input_names}"
            )
        given = set(self._input_names)
        for name in self._graph.list_arguments():
            if name not in given:
                self._params.get(name, allow_deferred_init=True)
        aux = self._graph.list_auxiliary_states()
        for name in aux:
            if name not in given:
                self._params.get(name, grad_req="null", allow_deferred_init=True)
        self._aux_names = [n for n in aux if n not in given]
        self._arg_names = [n for n in self._graph.list_arguments() if n not in given]
        keys = list(self._params.keys())
        cut = len(_common_prefix(keys))
        for key, p in self._params.items():
            self._reg_params[key[cut:]] = p
        self._gf = None

    def __repr__(self):
        return (
            f"{type(self).__name__}(\n{self._graph!r} : {len(self._input_names)} -> "
            f"{len(self._graph._outputs)}\n)"
        )

    # ------------------------------------------------------------ loading
    @staticmethod
    def imports(
        symbol_file, input_names, param_file=None, ctx=None, allow_missing=False, ignore_extra=False
    ):
        """A SymbolBlock from ``export``-ed files (``*-symbol.json`` and ``*.params``).

        Parameters
        ----------
        symbol_file : str
            MXNet JSON graph (from MXNet 1.x or gluonjax ``export``).
        input_names : str or list of str
            Names of the input variables, in call order.
        param_file : str, optional
            MXNet ``.params`` file (``arg:``/``aux:`` keys); values keep the file's dtype.
        allow_missing, ignore_extra : bool
            Otherwise parameters missing from (or extra in) the file raise
            :class:`~gluonjax.base.ParameterMismatchError` listing their names.
        """
        sym = _sym()
        graph = sym.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        known = graph.list_inputs()
        unknown = [n for n in input_names if n not in known]
        if unknown:
            raise MXNetError(
                f"SymbolBlock.imports: input(s) {unknown} are not variables of the graph in "
                f"'{symbol_file}'; its variables are {known}"
            )
        block = SymbolBlock(graph, [sym.var(n) for n in input_names])
        if param_file is not None:
            block.collect_params().load(
                param_file,
                ctx=ctx,
                allow_missing=allow_missing,
                ignore_extra=ignore_extra,
                cast_dtype=True,
                dtype_source="saved",
            )
        return block

    # ------------------------------------------------------------ shapes
    def _deferred_init(self, args):
        """Give deferred parameters the shapes (and float dtypes) the inputs imply."""
        if len(args) != len(self._input_names):
            raise MXNetError(
                f"SymbolBlock takes {len(self._input_names)} input(s) {self._input_names}, "
                f"got {len(args)}"
            )
        given = [(n, a) for n, a in zip(self._input_names, args, strict=True) if a is not None]
        shapes = {n: tuple(a.shape) for n, a in given}
        arg_s, _, aux_s = self._graph.infer_shape_partial(**shapes)
        found = dict(zip(self._graph.list_arguments(), arg_s, strict=False))
        found.update(zip(self._graph.list_auxiliary_states(), aux_s, strict=False))
        types = {}
        dtypes = {n: a.dtype for n, a in given}
        if any(np.dtype(d) != np.float32 for d in dtypes.values()):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    arg_t, _, aux_t = self._graph.infer_type(**dtypes)
                types = dict(zip(self._graph.list_arguments(), arg_t or (), strict=False))
                types.update(zip(self._graph.list_auxiliary_states(), aux_t or (), strict=False))
            except MXNetError:
                types = {}
        missing = []
        for name, p in self._params.items():
            if p._data is not None or p._deferred is None:
                continue
            shape = found.get(name)
            if not shape or not all(d > 0 for d in shape):
                missing.append(f"{name}: {shape}")
                continue
            t = types.get(name)
            if t is not None and np.issubdtype(np.dtype(t), np.floating):
                p.dtype = np.dtype(t).type
            p._finish_deferred_init(shape)
        if missing:
            raise DeferredInitializationError(
                f"SymbolBlock: cannot infer the shapes of {missing} from the input shapes "
                f"{shapes}; give these variables a shape (sym.var(name, shape=...))"
            )

    # ------------------------------------------------------------ forward
    def forward(self, x, *args):
        inputs = (x, *args)
        if len(inputs) != len(self._input_names):
            raise MXNetError(
                f"SymbolBlock takes {len(self._input_names)} input(s) {self._input_names}, "
                f"got {len(inputs)}"
            )
        if any(hasattr(a, "_outputs") for a in inputs):
            return self._compose(inputs)
        if _trace.current() is not None:
            raws = [getattr(a, "_data", a) for a in inputs]
            outs = self._run_traced(raws)
            return self._regroup([NDArray(o) for o in outs])
        return self._run_eager(inputs)

    def _graph_fn(self):
        if self._gf is None:
            from ..symbol._eval import graph_function

            self._gf = graph_function(self._graph)
        return self._gf

    def _param_values(self):
        """{name: NDArray} of the current (or traced) parameter values."""
        params = dict(self._params.items())
        if any(p._data is None and _trace.lookup(p) is None for p in params.values()):
            for p in params.values():
                p._check()
        return {n: p.data() for n, p in params.items()}

    def _run_traced(self, raws):
        """The graph on raw (traced) input values; writes BatchNorm statistics back."""
        vals = self._param_values()
        args = {n: vals[n]._data for n in self._arg_names}
        args.update(zip(self._input_names, raws, strict=False))
        aux = {n: vals[n]._data for n in self._aux_names}
        outs, new_aux = self._graph_fn()(args, aux, training=_ag.is_training())
        for name, value in new_aux.items():
            if name in vals:  # the traced wrapper: the trace returns it as an update
                vals[name]._data = value
        return outs

    def _run_eager(self, inputs):
        """Node by node through the ``nd`` path, so autograd records every op."""
        from .._ops.graph import topo
        from ..ndarray._invoke import invoke

        inputs = [to_ndarray(a) for a in inputs]
        if not all(isinstance(a, NDArray) for a in inputs):
            raise MXNetError("SymbolBlock takes NDArray (or numpy / jax array) inputs")
        if any(p._data is None for p in self._params.values()):
            self._deferred_init(inputs)
        vals = self._param_values()
        vals.update(zip(self._input_names, inputs, strict=False))
        # creation nodes with unknown (0) dims, e.g. MXNet's exported RNN begin states
        fixed = _resolved_shapes(self._graph, {n: v.shape for n, v in vals.items()})
        env = {}
        for node in topo(self._graph._outputs):
            if node.op is None:
                if node.name not in vals:
                    raise MXNetError(f"SymbolBlock: graph input '{node.name}' was not given")
                env[(id(node), 0)] = vals[node.name]
                continue
            ins = []
            for src, idx in node.inputs:
                if (id(src), idx) not in env:
                    raise MXNetError(
                        f"node '{node.name}' uses output {idx} of '{src.name}', which is hidden"
                    )
                ins.append(env[(id(src), idx)])
            kwargs = {k: v for k, v in node.attr_dict().items() if k != "_train"}
            if id(node) in fixed:
                kwargs["shape"] = fixed[id(node)]
            try:
                res = invoke(node.op, ins, kwargs)
            except MXNetError as err:
                raise MXNetError(f"node '{node.name}': {err}") from None
            res = res if isinstance(res, (list, tuple)) else [res]
            for i, r in enumerate(res):
                env[(id(node), i)] = r
        return self._regroup([env[(id(n), i)] for n, i in self._graph._outputs])

    def _regroup(self, outs):
        return list(outs) if self._multi else outs[0]

    # ------------------------------------------------------------ symbols
    def _compose(self, inputs):
        """The graph with its input variables replaced by ``inputs`` (Symbols)."""
        sym = _sym()
        from .._ops.graph import Node, topo

        syms = []
        for name, a in zip(self._input_names, inputs, strict=False):
            if not hasattr(a, "_outputs") or len(a._outputs) != 1:
                raise MXNetError(
                    f"SymbolBlock called on symbols takes one single-output Symbol per input; "
                    f"input '{name}' is {a!r}"
                )
            syms.append(a)
        repl = {n: s._outputs[0] for n, s in zip(self._input_names, syms, strict=False)}
        copies = {}
        for node in topo(self._graph._outputs):
            if node.op is None:
                if node.name in repl:
                    copies[id(node)] = repl[node.name]
                else:
                    copies[id(node)] = (node, 0)
                continue
            new_inputs = []
            for src, idx in node.inputs:
                target, tidx = copies[id(src)]
                new_inputs.append((target, tidx if src.op is None else idx))
            copy = Node(
                node.op, node.name, node.attrs, new_inputs, node.static_key, node.dyn, node.extra
            )
            copies[id(node)] = (copy, 0)
        outs = []
        for node, idx in self._graph._outputs:
            target, tidx = copies[id(node)]
            outs.append(sym.Symbol([(target, tidx if node.op is None else idx)]))
        if all(s._value is not None for s in syms):  # traced symbols: compute the values too
            values = self._run_traced([s._value for s in syms])
            for o, v in zip(outs, values, strict=False):
                o._value = v
        return self._regroup(outs)

    # ------------------------------------------------------------ misc
    def cast(self, dtype):
        """Cast the parameters; under float16 BatchNorm's statistics stay float32 (as MXNet)."""
        self._cached = None
        super().cast(dtype)
        if np.dtype(dtype) == np.float16:
            names = set(self._graph.list_inputs())
            for name in names:
                for stat, sibs in (
                    ("running_var", ("running_mean", "gamma", "beta")),
                    ("moving_var", ("moving_mean", "gamma", "beta")),
                ):
                    if name.endswith(stat):
                        base = name[: -len(stat)]
                        group = [name] + [base + s for s in sibs]
                        if all(g in names and g in self._params for g in group):
                            for g in group:
                                self._params[g].cast(np.float32)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError("SymbolBlock runs its graph directly")


def _resolved_shapes(graph, shapes):
    """``{id(node): shape}`` for input-less nodes whose shape has unknown (0) dims."""
    from .._ops.graph import topo
    from ..symbol._infer import created_shape, resolve_created

    if not any(n.op is not None and created_shape(n, {}, 0) for n in topo(graph._outputs)):
        return {}
    keys = resolve_created(graph, shapes)
    out = {}
    for node in topo(graph._outputs):
        if id(node) in keys:
            out[id(node)] = node.op.attr_dict(keys[id(node)], node.dyn)["shape"]
    return out
