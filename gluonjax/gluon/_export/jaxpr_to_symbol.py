"""jaxpr -> MXNet symbol graph (the structure of ``HybridBlock.export``'s JSON).

Every registry op call inside a traced program is a ``jit`` equation named after
its kernel (``FullyConnected__gj3``); :func:`gluonjax._ops.registry.kernel_owner`
maps it back to ``(op, static attributes)`` and it becomes ONE node of that MXNet
op. Other ``jit``/custom-derivative calls are inlined and a ``scan`` is unrolled
(its body once per step, between ``SliceChannel`` and ``stack`` nodes); any other primitive
(plain ``jax.numpy`` code in a Gluon-2 ``forward``) becomes a ``jax.<primitive>``
node (see :mod:`.jaxops`). Equations on constants only are folded; constant
arrays become variables ``_const0``.. (saved with the parameters), scalar
literals stay attributes.
"""

from __future__ import annotations

import math

import numpy as np
from jax.extend.core import Literal

from ..._ops import jaxops
from ..._ops.graph import Node
from ..._ops.jaxops import ExportError
from ..._ops.registry import REQUIRED, kernel_owner
from ..._ops.registry import get as get_op
from ...symbol.symbol import Symbol, hint_of

__all__ = ["jaxpr_to_symbol"]

_INLINE = {
    "custom_jvp_call": "call_jaxpr",
    "custom_vjp_call": "call_jaxpr",
    "custom_vjp_call_jaxpr": "fun_jaxpr",
    "closed_call": "call_jaxpr",
    "core_call": "call_jaxpr",
    "checkpoint": "jaxpr",
    "remat": "jaxpr",
}
_IDENTITY = ("amp_cast", "amp_multicast")


class _Const:
    """A value known at export time (literal, folded equation or trace constant)."""

    __slots__ = ("value", "entry")

    def __init__(self, value):
        self.value = np.asarray(value)
        self.entry = None


def _differs(value, default):
    if default is REQUIRED:
        return True
    if isinstance(value, float) and isinstance(default, float):
        return not (value == default or (math.isnan(value) and math.isnan(default)))
    return value != default


class _Converter:
    def __init__(self, remove_amp_cast):
        self.remove_amp_cast = remove_amp_cast
        self.counts = {}
        self.used = set()
        self.consts = {}  # variable name -> numpy array

    # -- naming
    def node_name(self, eqn, op):
        """The MXNet name the traced symbol gave this call (``dense0_fwd``), else a fresh one."""
        scope = str(getattr(eqn.source_info, "name_stack", "") or "").split("/")[-1]
        if scope and scope not in self.used and not scope.startswith(("jit(", "jvp(")):
            self.used.add(scope)
            return scope
        return self.fresh(hint_of(op.name))

    def fresh(self, hint):
        while True:
            n = self.counts.get(hint, 0)
            self.counts[hint] = n + 1
            name = f"{hint}{n}"
            if name not in self.used:
                self.used.add(name)
                return name

    def entry(self, x):
        """A graph entry ``(node, index)`` for an env value (materializing constants)."""
        if isinstance(x, _Const):
            if x.entry is None:
                name = self.fresh("_const")
                self.consts[name] = x.value
                x.entry = (Node(None, name), 0)
            return x.entry
        return x

    # -- walking
    def run(self, jaxpr, consts, ins):
        env = {}
        for v, c in zip(jaxpr.constvars, consts, strict=True):
            env[v] = _Const(c)
        for v, x in zip(jaxpr.invars, ins, strict=True):
            env[v] = x

        def read(v):
            return (
                _Const(np.asarray(v.val, dtype=v.aval.dtype)) if isinstance(v, Literal) else env[v]
            )

        for eqn in _live(jaxpr):
            outs = self.equation(eqn, read)
            for v, o in zip(eqn.outvars, outs, strict=True):
                env[v] = o
        return [read(v) for v in jaxpr.outvars]

    def equation(self, eqn, read):
        name = eqn.primitive.name
        if name in ("jit", "pjit"):
            owner = kernel_owner(eqn.params.get("name", ""))
            if owner is not None:
                return self.registry_node(eqn, owner, read)
            sub = eqn.params["jaxpr"]
            return self.run(sub.jaxpr, sub.consts, [read(v) for v in eqn.invars])
        if name == "scan":
            return self.scan(eqn, read)
        if name in _INLINE:
            sub = eqn.params[_INLINE[name]]
            inner, consts = (sub.jaxpr, sub.consts) if hasattr(sub, "consts") else (sub, ())
            return self.run(inner, consts, [read(v) for v in eqn.invars])
        return self.jax_node(eqn, read)

    def registry_node(self, eqn, owner, read):
        op, static_key = owner
        ins = list(eqn.invars[2:] if op.random else eqn.invars)
        nd = len(op.dynamic_names)
        arrays, dyn_vars = ins[: len(ins) - nd], ins[len(ins) - nd :]
        dyn = []
        for nm, v in zip(op.dynamic_names, dyn_vars, strict=True):
            x = read(v)
            if not isinstance(x, _Const) or x.value.size != 1:
                raise ExportError(
                    f"{op.name}: attribute '{nm}' is computed from the inputs inside the "
                    f"forward; an exported graph needs it as a constant"
                )
            dyn.append(x.value.item())
        dyn = tuple(dyn)
        if self.remove_amp_cast and op.name in _IDENTITY:
            return [read(v) for v in arrays][: len(eqn.outvars)]
        attrs = op.attr_dict(static_key, dyn)
        given = {
            k: v
            for k, v in attrs.items()  # MXNet-style: the non-default ones
            if not k.startswith("_") and (k in op.dynamic_names or _differs(v, op.attrs[k].default))
        }
        inputs = [self.entry(read(v)) for v in arrays]
        node = Node(op, self.node_name(eqn, op), given, inputs, static_key, dyn)
        aux_names = op.aux_names(attrs)
        n_res = len(eqn.outvars) - len(aux_names)
        outs = [(node, i) for i in range(n_res)]
        if aux_names:  # new auxiliary states: in inference the inputs, unchanged
            names = op.input_names(attrs, len(arrays))
            for aux_name in aux_names:
                k = names.index(aux_name) if aux_name in names else None
                outs.append(inputs[k] if k is not None else None)
        return outs

    def registry(self, opname, attrs, inputs, hint):
        """A node of registry op ``opname`` on graph entries ``inputs``."""
        op = get_op(opname)
        static_key, dyn = op.parse_attrs(attrs)
        return Node(op, self.fresh(hint), attrs, inputs, static_key, dyn)

    def scan(self, eqn, read):
        """``lax.scan`` unrolled: the body's nodes once per step, the scanned inputs
        split (``SliceChannel``) and the per-step outputs stacked (``stack``)."""
        p = eqn.params
        body, length = p["jaxpr"], p["length"]
        nc, ncarry = p["num_consts"], p["num_carry"]
        ins = [read(v) for v in eqn.invars]
        consts, carry, xs = ins[:nc], ins[nc : nc + ncarry], ins[nc + ncarry :]
        used = _used_invars(body.jaxpr)
        steps = []
        for j, x in enumerate(xs):
            if body.jaxpr.invars[nc + ncarry + j] not in used:
                steps.append([None] * length)
            elif isinstance(x, _Const):
                steps.append([_Const(x.value[i]) for i in range(length)])
            else:
                attrs = {"num_outputs": length, "axis": 0, "squeeze_axis": True}
                node = self.registry("SliceChannel", attrs, [self.entry(x)], "split")
                steps.append([(node, i) for i in range(length)])
        ys = None
        for i in reversed(range(length)) if p["reverse"] else range(length):
            outs = self.run(body.jaxpr, body.consts, consts + carry + [s[i] for s in steps])
            carry = outs[:ncarry]
            if ys is None:
                ys = [[None] * length for _ in outs[ncarry:]]
            for k, y in enumerate(outs[ncarry:]):
                ys[k][i] = y
        stacked = []
        for seq in ys or []:
            if all(isinstance(y, _Const) for y in seq):
                stacked.append(_Const(np.stack([y.value for y in seq])))
            else:
                attrs = {"axis": 0, "num_args": length}
                node = self.registry("stack", attrs, [self.entry(y) for y in seq], "stack")
                stacked.append((node, 0))
        return list(carry) + stacked

    def jax_node(self, eqn, read):
        prim = eqn.primitive
        vals = [read(v) for v in eqn.invars]
        if all(isinstance(x, _Const) for x in vals):
            jaxops.primitive(prim.name)
            return [_Const(o) for o in jaxops.fold(prim, eqn.params, [x.value for x in vals])]
        jaxops.primitive(prim.name)  # raises a clear error for unsupported primitives
        attrs = jaxops.encode_params(prim.name, eqn.params)
        lits, inputs = [], []
        for i, x in enumerate(vals):
            if isinstance(x, _Const) and x.value.ndim == 0:
                lits.append((i, x.value))
            else:
                inputs.append(self.entry(x))
        if lits:
            attrs["literals"] = jaxops.encode_literals(lits)
        if prim.multiple_results:
            attrs["num_outputs"] = str(len(eqn.outvars))
        op = jaxops.op_for(prim.name, tuple(sorted(attrs)))
        static_key, dyn = op.parse_attrs(attrs)
        node = Node(op, self.fresh(prim.name), attrs, inputs, static_key, dyn)
        return [(node, i) for i in range(len(eqn.outvars))]


def _used_invars(jaxpr):
    """The input variables some live equation (or an output) reads."""
    used = {v for v in jaxpr.outvars if not isinstance(v, Literal)}
    for eqn in _live(jaxpr):
        used.update(v for v in eqn.invars if not isinstance(v, Literal))
    return used


def _live(jaxpr):
    """The equations some output depends on (skipping a random op's unused key inputs)."""
    live = {v for v in jaxpr.outvars if not isinstance(v, Literal)}
    keep = []
    for eqn in reversed(jaxpr.eqns):
        if not any(v in live for v in eqn.outvars):
            continue
        keep.append(eqn)
        ins = eqn.invars
        if eqn.primitive.name in ("jit", "pjit"):
            owner = kernel_owner(eqn.params.get("name", ""))
            if owner is not None and owner[0].random:
                ins = ins[2:]
        live.update(v for v in ins if not isinstance(v, Literal))
    return keep[::-1]


def jaxpr_to_symbol(closed, input_names, remove_amp_cast=True):
    """Convert a closed jaxpr into ``(Symbol, constants)``.

    Parameters
    ----------
    closed : jax.extend.core.ClosedJaxpr
        The traced inference function; its inputs are named by ``input_names``
        (parameters by structural name, data inputs ``data``/``data0``..).
    input_names : list of str
    remove_amp_cast : bool
        Drop ``amp_cast``/``amp_multicast`` nodes, as MXNet's export does.

    Returns
    -------
    symbol : Symbol
        A group of the outputs (one symbol for one output).
    consts : dict
        ``{'_const0': numpy array}`` for constant arrays the graph reads.
    """
    conv = _Converter(remove_amp_cast)
    conv.used.update(input_names)
    ins = [(Node(None, n), 0) for n in input_names]
    outs = conv.run(closed.jaxpr, closed.consts, ins)
    heads = []
    for o in outs:
        if o is None:
            raise ExportError("an output of the forward is an auxiliary-state update")
        heads.append(conv.entry(o))
    return Symbol(heads), conv.consts
