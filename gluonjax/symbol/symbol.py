"""Symbol: a node of a declarative graph of registry ops (``mx.sym``).

A Symbol may also carry a value (a jax array or tracer). Inside a hybridized
block's trace every symbol does: the graph gives MXNet's names and structure
while the values flow through ``jax.jit``. Declarative symbols (no value) are
bound and run by the Executor, or exported as MXNet JSON.
"""

from __future__ import annotations

import numpy as np

from .. import attribute as _attribute
from .._ops.graph import Node, topo
from ..base import HybridizationError, MXNetError, NotImplementedForSymbol
from . import _surface

__all__ = ["Symbol", "var", "Variable", "Group", "create", "hint_of"]


class TracedBoolError(HybridizationError, NotImplementedForSymbol):
    """``bool()``/``float()`` of a traced symbol inside a hybridized forward."""

    def __init__(self, msg):
        MXNetError.__init__(self, msg)

    def __str__(self):
        return str(self.args[0])


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
                raise _surface.SymbolValueError(
                    f"Cannot find output that matches name {index!r}; outputs are {names}"
                )
            index = names.index(index)
        if (
            isinstance(index, int)
            and len(self._outputs) > 1
            or (isinstance(index, int) and self._value is None)
        ):
            if not -len(self._outputs) <= index < len(self._outputs):
                raise _surface.SymbolIndexError(
                    f"output index {index} out of range ({len(self._outputs)} outputs)"
                )
            value = self._value[index] if isinstance(self._value, list) else None
            return Symbol([self._outputs[index]], value=value)
        from . import _ops_bridge

        return _ops_bridge.getitem(self, index)

    # ------------------------------------------------------------ attributes
    def attr(self, key):
        """The string attribute ``key`` of this symbol's (first) node, or None."""
        return _surface.attr(self, key)

    def list_attr(self, recursive=False):
        """Attributes of this symbol's (first) node as strings."""
        return _surface.list_attr(self, recursive)

    def attr_dict(self):
        """{node name: {attribute: string}} for every node with attributes."""
        return _surface.attr_dict(self)

    def _set_attr(self, **kwargs):
        _surface.set_attr(self, kwargs)

    def debug_str(self):
        """MXNet's text description of the graph."""
        return _surface.debug_str(self)

    def __copy__(self):
        from ._compose import copy_graph

        out = copy_graph(self)
        out._value = self._value
        return out

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __reduce__(self):
        from ._json import load_json

        return load_json, (self.tojson(),)

    # ------------------------------------------------------------ listing
    def _aux_nodes(self):
        aux = set()
        for node in topo(self._outputs):
            aux_names = () if node.op is None else node.op.aux_names(node.attr_dict())
            if aux_names:
                names = node.op.input_names(node.attr_dict(), len(node.inputs))
                for (src, _), nm in zip(node.inputs, names):
                    if nm in aux_names and src.op is None:
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
        """The inputs of this symbol's node(s) as a group (None for a variable)."""
        return _surface.get_children(self)

    def _gen_atomic_symbol(self):
        """A symbol with this symbol's (single) op and attributes applied to fresh
        variables: the op alone, without the graph that feeds it."""
        return _surface.gen_atomic(self)

    # ------------------------------------------------------------ values
    @property
    def shape(self):
        if self._value is None:
            raise _surface.SymbolAttributeError(
                f"'Symbol' object has no attribute 'shape': {self!r} is declarative; use "
                f"sym.infer_shape(data=...) to compute shapes"
            )
        return tuple(self._value.shape)

    @property
    def dtype(self):
        if self._value is None:
            raise _surface.SymbolAttributeError(
                f"'Symbol' object has no attribute 'dtype': {self!r} is declarative; use "
                f"infer_type()"
            )
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
        if self._value is None:
            raise NotImplementedForSymbol(self.__bool__, "bool")
        raise TracedBoolError(
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
    def tojson(self, remove_amp_cast=True):
        """MXNet 1.9.1 JSON text of the graph (gluonjax graphs hold no amp_cast nodes)."""
        from ._json import tojson

        return tojson(self)

    def save(self, fname, remove_amp_cast=True):
        """Write the graph as MXNet JSON to ``fname`` (atomically)."""
        from ._json import save

        save(self, fname)

    # ------------------------------------------------------------ inference
    def infer_shape(self, *args, **kwargs):
        """``(arg_shapes, out_shapes, aux_shapes)`` given some input shapes (by position or
        name); ``(None, None, None)`` with a warning if a shape stays unknown. A 0 in a
        shape is an unknown dimension (-1 under ``mx.util.np_shape()``)."""
        from ._infer import infer_shape

        return infer_shape(self, args, kwargs, partial=False)

    def infer_shape_partial(self, *args, **kwargs):
        """As :meth:`infer_shape`, with ``()`` (None under ``np_shape``) for unknown shapes
        and 0 (-1) for unknown dimensions."""
        from ._infer import infer_shape

        return infer_shape(self, args, kwargs, partial=True)

    def infer_type(self, *args, **kwargs):
        """``(arg_types, out_types, aux_types)`` given some input dtypes (by position or
        name); ``(None, None, None)`` with a warning if a type stays unknown."""
        from ._infer import infer_type

        return infer_type(self, args, kwargs)

    def infer_type_partial(self, *args, **kwargs):
        """As :meth:`infer_type`, with None for the types that stay unknown."""
        from ._infer import infer_type

        return infer_type(self, args, kwargs, partial=True)


# MXNet's Symbol operators call the legacy CamelCase internals (``_PlusScalar``),
# whose lower-cased names are the auto-name hints of scalar arithmetic.
_CAMEL_HINTS = {
    f"_{n}_scalar": f"_{n}scalar"
    for n in (
        "plus",
        "minus",
        "rminus",
        "mul",
        "div",
        "rdiv",
        "mod",
        "rmod",
        "power",
        "rpower",
        "maximum",
        "minimum",
        "hypot",
    )
}


def hint_of(opname):
    """MXNet's auto-name hint for a call of ``opname``: its lower-cased name
    (``broadcast_to`` -> ``broadcast_to0``), ``_plus_scalar`` -> ``_plusscalar``."""
    return _CAMEL_HINTS.get(opname, opname.lower())


def var(
    name,
    attr=None,
    shape=None,
    lr_mult=None,
    wd_mult=None,
    dtype=None,
    init=None,
    stype=None,
    **kwargs,
):
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
        codes = {"default": 0, "row_sparse": 1, "csr": 2}
        if stype not in codes:
            raise MXNetError(f"var(): unknown stype {stype!r}; use one of {list(codes)}")
        extra["__storage_type__"] = str(codes[stype])
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


from ._create import _as_input, _compute, create, hidden_keys  # noqa: E402,F401  (needs Symbol)
