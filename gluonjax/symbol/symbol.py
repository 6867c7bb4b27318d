"""Symbol: a node of a declarative graph of registry ops (``mx.sym``).

A Symbol may also carry a value (a jax array or tracer). Inside a hybridized
block's trace every symbol does: the graph gives MXNet's names and structure
while the values flow through ``jax.jit``. Declarative symbols (no value) are
bound and run by the Executor, or exported as MXNet JSON.
"""

from __future__ import annotations

import jax
import numpy as np

from .. import attribute as _attribute
from .. import autograd as _ag
from .. import name as _name
from .. import random as _random
from .._ops import registry as _reg
from ..base import HybridizationError, MXNetError
from ._node import Node, topo

__all__ = ["Symbol", "var", "Variable", "Group", "create", "hint_of"]


class Symbol:
    """One or more outputs of graph nodes.

    Examples
    --------
    >>> import gluonjax as mx
    >>> data = mx.sym.var('data')
    >>> fc = mx.sym.FullyConnected(data, num_hidden=4, name='fc1')
    >>> fc.list_arguments()
    ['data', 'fc1_weight', 'fc1_bias']
    >>> fc
    <Symbol fc1>
    """

    __slots__ = ("_outputs", "_value", "_param", "__weakref__")
    __array_priority__ = 1001.0

    def __init__(self, outputs, value=None):
        self._outputs = list(outputs)
        self._value = value
        self._param = None

    # ------------------------------------------------------------ identity
    @property
    def name(self):
        if len(self._outputs) != 1:
            return None
        return self._outputs[0][0].name

    def __repr__(self):
        if len(self._outputs) == 1:
            return f"<Symbol {self.name}>"
        return "<Symbol group [" + ", ".join(n.name for n, _ in self._outputs) + "]>"

    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (self[i] for i in range(len(self._outputs)))

    def __getitem__(self, index):
        if isinstance(index, str):
            names = self.list_outputs()
            if index not in names:
                raise MXNetError(f"no output named {index!r}; outputs are {names}")
            index = names.index(index)
        if isinstance(index, int) and len(self._outputs) > 1 or (
            isinstance(index, int) and self._value is None
        ):
            if not -len(self._outputs) <= index < len(self._outputs):
                raise MXNetError(f"output index {index} out of range ({len(self._outputs)})")
            value = self._value[index] if isinstance(self._value, list) else None
            return Symbol([self._outputs[index]], value=value)
        from . import _ops_bridge

        return _ops_bridge.getitem(self, index)

    # ------------------------------------------------------------ attributes
    def attr(self, key):
        """The string attribute ``key`` of this (single) symbol's node, or None."""
        node = self._outputs[0][0]
        v = node.extra.get(key, node.extra.get(f"__{key}__"))
        if v is None and key in node.attrs:
            v = node.str_attrs()[key]
        return v

    def list_attr(self, recursive=False):
        if recursive:
            return {k: v for n, d in self.attr_dict().items() for k, v in d.items()}
        node = self._outputs[0][0]
        out = dict(node.str_attrs())
        out.update({k: str(v) for k, v in node.extra.items()})
        return out

    def attr_dict(self):
        """{node name: {attribute: string}} for every node with attributes."""
        out = {}
        for node in topo(self._outputs):
            d = dict(node.str_attrs())
            d.update({k: str(v) for k, v in node.extra.items()})
            if d:
                out[node.name] = d
        return out

    def _set_attr(self, **kwargs):
        self._outputs[0][0].extra.update(hidden_keys(kwargs))

    # ------------------------------------------------------------ listing
    def _aux_nodes(self):
        aux = set()
        for node in topo(self._outputs):
            if node.op is not None and node.op.aux:
                names = node.op.input_names(node.attr_dict(), len(node.inputs))
                for (src, _), nm in zip(node.inputs, names):
                    if nm in node.op.aux and src.op is None:
                        aux.add(id(src))
        return aux

    def list_arguments(self):
        """Names of the variables that are arguments (not auxiliary states)."""
        aux = self._aux_nodes()
        return [n.name for n in topo(self._outputs) if n.op is None and id(n) not in aux]

    def list_auxiliary_states(self):
        """Names of the auxiliary-state variables (BatchNorm moving mean/var)."""
        aux = self._aux_nodes()
        return [n.name for n in topo(self._outputs) if n.op is None and id(n) in aux]

    def list_inputs(self):
        """Every variable name, arguments and auxiliary states."""
        return [n.name for n in topo(self._outputs) if n.op is None]

    def list_outputs(self):
        out = []
        for node, idx in self._outputs:
            out.append(node.output_names()[idx] if node.op is not None else node.name)
        return out

    def get_internals(self):
        """A group of every output of every node, in topological order."""
        outs = []
        for node in topo(self._outputs):
            outs.extend((node, i) for i in range(node.visible()))
        return Symbol(outs)

    def get_children(self):
        """The inputs of this symbol's node as a group (None for a variable)."""
        node = self._outputs[0][0]
        return Symbol(node.inputs) if node.inputs else None

    # ------------------------------------------------------------ values
    @property
    def shape(self):
        if self._value is None:
            raise MXNetError(
                f"{self!r} is a declarative symbol and has no shape; use "
                f"sym.infer_shape(data=...) to compute shapes"
            )
        return tuple(self._value.shape)

    @property
    def dtype(self):
        if self._value is None:
            raise MXNetError(f"{self!r} has no dtype; use infer_type()")
        return np.dtype(self._value.dtype)

    @property
    def ndim(self):
        return len(self.shape)

    def __jax_array__(self):
        if self._value is None:
            raise MXNetError(f"{self!r} is declarative: it has no value to compute with")
        return self._value

    def asnumpy(self):
        raise HybridizationError(
            f"asnumpy() on {self!r}: inside a hybridized block values are symbolic "
            f"(traced by jax.jit) and cannot be copied to NumPy. Move the asnumpy() call "
            f"outside hybrid_forward, or call net.hybridize(False) to debug eagerly."
        )

    asscalar = asnumpy

    def __bool__(self):
        raise HybridizationError(
            f"Python control flow on the value of {self!r} inside a hybridized block: "
            f"a trace cannot follow it. Use F.where(cond, x, y), or "
            f"F.contrib.cond / while_loop / foreach, or call hybridize(False)."
        )

    def __float__(self):
        return self.__bool__()

    __int__ = __index__ = __float__

    def __hash__(self):
        return id(self)

    def __call__(self, *args, **kwargs):
        from ._compose import compose

        return compose(self, *args, **kwargs)

    # ------------------------------------------------------------ serialization
    def tojson(self):
        """MXNet 1.9.1 JSON text of the graph."""
        from ._json import tojson

        return tojson(self)

    def save(self, fname, remove_amp_cast=True):
        """Write the graph as MXNet JSON to ``fname`` (atomically)."""
        from ._json import save

        save(self, fname)

    # ------------------------------------------------------------ inference
    def infer_shape(self, *args, **kwargs):
        from ._infer import infer_shape

        return infer_shape(self, args, kwargs, partial=False)

    def infer_shape_partial(self, *args, **kwargs):
        from ._infer import infer_shape

        return infer_shape(self, args, kwargs, partial=True)

    def infer_type(self, *args, **kwargs):
        from ._infer import infer_type

        return infer_type(self, args, kwargs)


def hint_of(opname):
    """MXNet-style auto-name hint: ``_plus_scalar`` -> ``_plusscalar``."""
    low = opname.lower()
    lead = "_" if low.startswith("_") else ""
    return lead + low.lstrip("_").replace("_", "")


def var(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
        stype=None, **kwargs):
    """A variable (a named input of the graph).

    Parameters
    ----------
    name : str
    shape : tuple, optional
        Known shape (used by infer_shape).
    dtype, init, lr_mult, wd_mult, attr, stype : optional
        Stored as ``__dtype__``, ``__init__``... attributes, as MXNet does.
    """
    if not isinstance(name, str):
        raise MXNetError(f"variable name must be a string, got {type(name).__name__}")
    extra = hidden_keys(_attribute.current().get(attr))
    if shape is not None:
        extra["__shape__"] = str(tuple(shape))
    if lr_mult is not None:
        extra["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        extra["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        from ._json import dtype_code

        extra["__dtype__"] = dtype_code(dtype)
    if init is not None:
        extra["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        extra["__storage_type__"] = str(stype)
    for k, v in kwargs.items():
        if k.startswith("__") and k.endswith("__"):
            extra[k] = str(v)
        else:
            raise MXNetError(f"var(): unknown argument {k!r}")
    return Symbol([(Node(None, name, extra=extra), 0)])


Variable = var


def Group(symbols):
    """One symbol with the outputs of all ``symbols``."""
    outs = []
    for s in symbols:
        if not isinstance(s, Symbol):
            raise MXNetError(f"Group expects Symbols, got {type(s).__name__}")
        outs.extend(s._outputs)
    return Symbol(outs)


def _as_input(x, op, iname):
    """A symbol input: Symbols pass; arrays become constant variables (value mode)."""
    if isinstance(x, Symbol):
        if len(x._outputs) != 1:
            raise MXNetError(f"{op.name}: input '{iname}' is a group of {len(x)} outputs")
        return x
    raw = getattr(x, "_data", x)
    if isinstance(raw, (jax.Array, np.ndarray, int, float)) or hasattr(raw, "aval"):
        s = Symbol([(Node(None, f"_const_{iname}"), 0)], value=raw)
        return s
    raise MXNetError(f"{op.name}: input '{iname}' must be a Symbol, got {type(x).__name__}")


_HIDDEN = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")
# initializers MXNet attaches to auto-created inputs (FSetInputVarAttrOnCompose)
_VAR_INIT = {"moving_mean": '["zero", {}]', "moving_var": '["one", {}]'}
_INIT_OPS = {"BatchNorm": _VAR_INIT, "BatchNorm_v1": _VAR_INIT, "_contrib_SyncBatchNorm": _VAR_INIT,
             "LeakyReLU": {"gamma": '["Constant", {"value": 0.25}]'}}


def hidden_keys(attrs):
    """MXNet stores ``ctx_group``, ``lr_mult``... as ``__ctx_group__``..: normalise keys."""
    return {f"__{k}__" if k in _HIDDEN else k: str(v) for k, v in (attrs or {}).items()}


def _auto_var(op, name, iname, user_attrs, extra):
    """The variable MXNet creates for a missing input: it inherits the node's attributes."""
    attrs = {k: v if isinstance(v, str) else _reg.attr_to_str(v) for k, v in user_attrs.items()}
    attrs.update(extra)
    init = _INIT_OPS.get(op.name, {}).get(iname)
    if init is not None:
        attrs["__init__"] = init
    return Symbol([(Node(None, f"{name}_{iname}", extra=attrs), 0)])


def create(op, args, kwargs, name=None, attr=None, hint=None):
    """Apply registry ``op`` to symbols: a new node, and its value if inputs have one."""
    attr_kw = {k: v for k, v in kwargs.items() if k in op.attrs}
    given = {k: v for k, v in kwargs.items() if k not in op.attrs}
    if op.variadic:
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        if "num_args" in op.attrs and attr_kw.get("num_args") in (None, 0):
            attr_kw["num_args"] = len(args)
    else:
        args = _reg.split_positional_attrs(op, args, attr_kw)
    static_key, dyn = op.parse_attrs(attr_kw)
    attrs = op.attr_dict(static_key, dyn)
    name = _name.current().get(name, hint or hint_of(op.name))
    names = op.input_names(attrs, len(args) if op.variadic else None)
    if not op.variadic:
        unknown = [k for k in given if k not in names]
        if unknown or len(args) > len(names):
            raise MXNetError(
                f"{op.name}: unknown input(s) {unknown or args[len(names):]}; inputs are "
                f"{list(names)}, attributes are {[a for a in op.attrs if a[0] != '_']}"
            )
    extra = hidden_keys(_attribute.current().get(attr))
    user_attrs = {k: v for k, v in attr_kw.items() if not k.startswith("_")}
    inputs = []
    for i, iname in enumerate(names):
        x = args[i] if i < len(args) else given.get(iname)
        inputs.append(_auto_var(op, name, iname, user_attrs, extra) if x is None
                      else _as_input(x, op, iname))
    node = Node(op, name, user_attrs, [s._outputs[0] for s in inputs], static_key, dyn, extra)
    outs = [Symbol([(node, i)]) for i in range(node.visible())]
    if all(s._value is not None for s in inputs):
        _compute(op, node, inputs, outs)
    if len(outs) == 1:
        return outs[0]
    group = Symbol([(node, i) for i in range(len(outs))])
    if outs[0]._value is not None:
        group._value = [o._value for o in outs]
    return group


def _compute(op, node, inputs, outs):
    """Run the op's kernel on the inputs' values (inside a trace: on tracers)."""
    key = node.static_key
    if op.mode:
        key = key[:-1] + (_ag.is_training(),)
    vals = [s._value for s in inputs]
    if op.random:
        vals[0:0] = _random.key_and_counter()
    vals.extend(node.dyn)
    try:
        res = op.kernel(key)(*vals)
    except MXNetError:
        raise
    except Exception as err:
        if "Tracer" in type(err).__name__ or "Concretization" in type(err).__name__:
            raise
        raise op.fail(err, vals, key) from None
    if op.aux:
        res, new_aux = res
        names = op.input_names(node.attr_dict(), len(inputs))
        for nm, value in zip(op.aux, new_aux):
            if nm in names:
                inputs[names.index(nm)]._value = value
    res = list(res) if isinstance(res, (tuple, list)) else [res]
    for o, r in zip(outs, res):
        o._value = r

