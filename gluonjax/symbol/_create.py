"""Symbol construction: apply a registry op to symbols (``create``).

A missing input becomes a variable ``<name>_<input>`` that inherits the node's
attributes (and MXNet's initializer for BatchNorm statistics / PReLU gamma), as
MXNet's composition does; attribute keys MXNet hides (``ctx_group``,
``lr_mult``...) are stored as ``__key__``.
"""

from __future__ import annotations

import jax
import numpy as np

from .. import attribute as _attribute
from .. import name as _name
from .._ops import registry as _reg
from .._ops.graph import Node
from ..base import MXNetError
from ._json import HIDDEN_KEYS as _HIDDEN
from .symbol import Symbol, hint_of

__all__ = ["create", "hidden_keys"]


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


# initializers MXNet attaches to auto-created inputs (FSetInputVarAttrOnCompose)
_VAR_INIT = {"moving_mean": '["zero", {}]', "moving_var": '["one", {}]'}
_INIT_OPS = {
    "BatchNorm": _VAR_INIT,
    "BatchNorm_v1": _VAR_INIT,
    "_contrib_SyncBatchNorm": _VAR_INIT,
    "_contrib_BatchNormWithReLU": _VAR_INIT,
    "LeakyReLU": {"gamma": '["Constant", {"value": 0.25}]'},
}


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


def _node_metadata(op, kwargs):
    """Split MXNet's node attributes out of an op call's keywords.

    ``lr_mult=``, ``ctx_group=``... become ``__lr_mult__``...; ``__key__=`` stays as is
    (``__layout__``); both are node metadata, inherited by auto-created inputs.
    """
    meta, rest = {}, {}
    for k, v in kwargs.items():
        if k in op.attrs or isinstance(v, Symbol):
            rest[k] = v
        elif k in _HIDDEN or any(k.startswith(h) for h in _HIDDEN):
            meta[f"__{k}__"] = str(v)
        elif any(k.endswith("_" + h) for h in _HIDDEN):
            hidden = next(h for h in _HIDDEN if k.endswith("_" + h))
            raise MXNetError(
                f"{op.name}: setting variable attributes with {k} is deprecated (as in "
                f"MXNet); use w = mx.sym.Variable(..., {hidden}={v}) and pass "
                f"{k[: -len(hidden) - 1]}=w"
            )
        elif k.startswith("__") and k.endswith("__") and len(k) > 4:
            meta[k] = str(v)
        else:
            rest[k] = v
    return meta, rest


def _signature_inputs(op, attrs):
    """Every input name ``op`` takes with ``attrs`` or with one boolean attribute flipped
    (``use_sequence_length``, ``no_bias``): the inputs of its MXNet signature."""
    names = set(op.input_names(attrs))
    for k, a in op.attrs.items():
        if a.kind == "bool" and not k.startswith("_"):
            try:
                names.update(op.input_names({**attrs, k: not attrs[k]}))
            except Exception:  # an attribute combination the op rejects
                continue
    return names


def create(op, args, kwargs, name=None, attr=None, hint=None):
    """Apply registry ``op`` to symbols: a new node, and its value if inputs have one."""
    meta, kwargs = _node_metadata(op, kwargs)
    attr_kw = {k: v for k, v in kwargs.items() if k in op.attrs}
    given = {k: v for k, v in kwargs.items() if k not in op.attrs}
    if given and not any(not a.startswith("_") for a in op.attrs):
        # as in nd (and MXNet): ops without parameters ignore extra non-input keywords
        # (``F.zeros_like(x, dtype='int64')`` keeps x's dtype)
        given = {k: v for k, v in given.items() if isinstance(v, Symbol) or v is None}
    if op.variadic:
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        if "num_args" in op.attrs and attr_kw.get("num_args") in (None, 0):
            attr_kw["num_args"] = len(args)
    else:
        args = _reg.split_positional_attrs(op, args, attr_kw)
        strays = [
            k
            for k, v in given.items()
            if v is not None and not isinstance(v, Symbol) and k not in op.default_inputs()
        ]
        if strays:  # a misspelled attribute: say so before "required attribute is missing"
            raise op.unknown_keywords(strays)
    static_key, dyn = op.parse_attrs(attr_kw)
    attrs = op.attr_dict(static_key, dyn)
    name = _name.current().get(name, hint or hint_of(op.name))
    names = op.input_names(attrs, len(args) if op.variadic else None)
    if not op.variadic:
        # as MXNet's generated functions do, an input of the op's signature passed as
        # None is left out (``SequenceReverse(x, sequence_length=None)``, ``bias=None``)
        unknown = [k for k, v in given.items() if k not in names]
        if unknown and all(given[k] is None for k in unknown):
            # ops without parameters ignore any extra keyword (``zeros_like(x, dtype=None)``)
            paramless = not any(not a.startswith("_") for a in op.attrs)
            unknown = [
                k for k in unknown if not paramless and k not in _signature_inputs(op, attrs)
            ]
        if unknown or len(args) > len(names):
            raise MXNetError(
                f"{op.name}: unknown input(s) {unknown or args[len(names) :]}; inputs are "
                f"{list(names)}, attributes are {[a for a in op.attrs if a[0] != '_']}"
            )
    extra = hidden_keys(_attribute.current().get(attr))
    extra.update(meta)
    user_attrs = {k: v for k, v in attr_kw.items() if not k.startswith("_")}
    inputs = []
    for i, iname in enumerate(names):
        x = args[i] if i < len(args) else given.get(iname)
        inputs.append(
            _auto_var(op, name, iname, user_attrs, extra) if x is None else _as_input(x, op, iname)
        )
    node = Node(op, name, user_attrs, [s._outputs[0] for s in inputs], static_key, dyn, extra)
    outs = [Symbol([(node, i)]) for i in range(node.visible())]
    # a creation node whose shape has unknown dims (``sym.ones((-1, -1))``) gets it
    # from shape inference when bound: nothing to compute now
    if all(s._value is not None for s in inputs) and not (inputs == [] and _deferred(node)):
        _compute(op, node, inputs, outs)
    if len(outs) == 1:
        return outs[0]
    group = Symbol([(node, i) for i in range(len(outs))])
    if outs[0]._value is not None:
        group._value = [o._value for o in outs]
    return group


def _deferred(node):
    """Whether creation node ``node`` leaves dimensions of its shape to inference."""
    from ._infer import created_shape

    return created_shape(node) is not None


def _compute(op, node, inputs, outs):
    """Run the node on the inputs' values (inside a trace: on tracers); see ``run_node``."""
    from ._eval import run_node

    res, new_aux = run_node(node, [s._value for s in inputs])
    if new_aux:
        names = op.input_names(node.attr_dict(), len(inputs))
        present = [nm for nm in op.aux_names(node.attr_dict()) if nm in names]
        for nm, value in zip(present, new_aux):
            inputs[names.index(nm)]._value = value
    for o, r in zip(outs, res):
        o._value = r
