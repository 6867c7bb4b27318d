"""``sym.contrib.foreach`` / ``while_loop`` / ``cond`` on declarative symbols.

Each traces the user's functions once on fresh variables (in an ``AttrScope`` naming
the subgraph, ``foreach0``, ``while_loop_cond0``...), cuts the subgraphs
(:func:`._subgraph.cut`) and adds one ``_foreach`` / ``_while_loop`` / ``_cond`` node
with MXNet 1.9.1's attributes, so the graph binds, differentiates, infers shapes and
saves to JSON (with the subgraphs under ``"subgraphs"``) as MXNet's does.

Examples
--------
>>> import gluonjax as mx
>>> data, state = mx.sym.var("data"), mx.sym.var("state")
>>> outs, states = mx.sym.contrib.foreach(
...     lambda x, s: (x + s[0], [s[0] * 2]), data, [state])
>>> outs.list_arguments()
['data', 'state']
>>> ex = mx.sym.Group([outs] + states).bind(
...     mx.cpu(), {"data": mx.nd.array([[1.0], [2.0]]), "state": mx.nd.array([1.0])})
>>> [o.asnumpy().tolist() for o in ex.forward()]
[[[2.0], [4.0]], [4.0]]
"""

from __future__ import annotations

from .. import attribute as _attribute
from .._control_flow import flatten, install_declarative, regroup
from .._ops import registry as _reg
from ..base import ControlFlowError
from ._subgraph import SCOPE_KEY, Subgraph, cut
from .symbol import Symbol, create, var

__all__ = ["foreach", "while_loop", "cond"]


def _unique_name(base):
    """``base`` + a counter (MXNet's ``_get_unique_subgraph_name``), prefixed with the
    enclosing subgraph's name and ``$`` inside another loop body."""
    parent = _attribute.current()._attr.get(SCOPE_KEY, "")
    if parent:
        base = f"{parent}${base}"
    counts = _attribute.AttrScope._subgraph_names
    counts[base] += 1
    return f"{base}{counts[base] - 1}"


def _input_names(syms, taken):
    """Unique names for the variables standing for ``syms`` inside a subgraph."""
    names = []
    for s in syms:
        node, idx = s._outputs[0]
        base = f"{node.name}-{idx}"
        new, n = base, 0
        while new in taken:
            n += 1
            new = f"{base}_{n}"
        taken.add(new)
        names.append(new)
    return names


def _heads(outputs, name, input_names):
    """Output entries of a subgraph: an output that is an input or made outside the
    scope is copied by an ``identity`` node in the scope (as MXNet does)."""
    heads, seen = [], set()
    for o in outputs:
        if not isinstance(o, Symbol) or len(o._outputs) != 1:
            raise ControlFlowError(
                f"{name}: the outputs must be Symbols (or nested lists of them), got {o!r}"
            )
        node, idx = o._outputs[0]
        if node.op is None or node.extra.get(SCOPE_KEY) != name or (id(node), idx) in seen:
            o = create(_reg.get("_copy"), (o,), {}, hint="identity")
            node, idx = o._outputs[0]
        seen.add((id(node), idx))
        heads.append((node, idx))
    return heads


def _trace(name, var_names, call):
    """Run ``call(fresh variables)`` in the scope ``name``: ``(result, scope variables)``."""
    with _attribute.AttrScope(**{SCOPE_KEY: name}):
        fresh = [var(n) for n in var_names]
        return call(fresh)


def _subgraph(name, outputs):
    with _attribute.AttrScope(**{SCOPE_KEY: name}):
        heads = _heads(outputs, name, ())
    return cut(heads, name)


def _node(opname, graphs, inputs, attrs, n_outputs):
    syms = [Symbol([entry]) for entry in inputs]
    attrs = {k: (str(list(v)) if isinstance(v, (list, tuple)) else v) for k, v in attrs.items()}
    attrs.update(num_args=len(syms) + len(graphs), num_outputs=n_outputs)
    attrs["_subgraphs"] = tuple(Subgraph(g) for g in graphs)
    res = create(_reg.get(opname), tuple(syms), attrs, hint=opname)
    return [res[i] for i in range(n_outputs)]


def foreach(body, data, init_states, name="foreach"):
    """Declarative ``sym.contrib.foreach``: one ``_foreach`` node (see module docs)."""
    flat_data, data_fmt = flatten(data, "foreach data")
    flat_states, state_fmt = flatten(init_states, "foreach init_states")
    name = _unique_name(name)
    taken = set()
    data_names = _input_names(flat_data, taken)
    state_names = _input_names(flat_states, taken)

    def call(fresh):
        return body(
            regroup(fresh[: len(flat_data)], data_fmt), regroup(fresh[len(flat_data) :], state_fmt)
        )

    out, states = _trace(name, data_names + state_names, call)
    flat_out, out_fmt = flatten(out, "foreach output")
    flat_new, new_fmt = flatten(states, "foreach states")
    if new_fmt != state_fmt:
        raise ControlFlowError(
            f"foreach {name}: the body returned states in the format {new_fmt}, but "
            f"init_states has the format {state_fmt} (0 is one array, a list a list)"
        )
    sub, ins = _subgraph(name, flat_out + flat_new)
    names = [n for n, _ in ins]
    for what, group in (("data array", data_names), ("state", state_names)):
        for k, n in enumerate(group):
            if n not in names:
                raise ControlFlowError(
                    f"foreach {name}: {what} {k} is not used in the loop body; the data "
                    f"arrays and the states have to be used in the loop body"
                )
    in_data_locs = [names.index(n) for n in data_names]
    in_state_locs = [names.index(n) for n in state_names]
    remain_locs = [k for k, n in enumerate(names) if n not in data_names + state_names]
    inputs = [s._outputs[0] for s in flat_data + flat_states] + [ins[k][1] for k in remain_locs]
    n_out = len(flat_out) + len(flat_new)
    attrs = dict(num_out_data=len(flat_out), in_state_locs=in_state_locs,
                 in_data_locs=in_data_locs, remain_locs=remain_locs)  # fmt: skip
    res = _node("_foreach", [sub], inputs, attrs, n_out)
    return regroup(res[: len(flat_out)], out_fmt), regroup(res[len(flat_out) :], state_fmt)


def _union(parts, loop_vars=()):
    """The inputs of several subgraphs as one list: ``(entries, locs per subgraph)``.
    ``parts`` holds ``(subgraph inputs, {input name: loop variable index})``."""
    entries, where, locs = [], {}, []
    for ins, var_of in parts:
        mine = []
        for nm, entry in ins:
            if nm in var_of:
                entry = loop_vars[var_of[nm]]._outputs[0]
            key = (id(entry[0]), entry[1])
            if key not in where:
                where[key] = len(entries)
                entries.append(entry)
            mine.append(where[key])
        locs.append(mine)
    return entries, locs


def while_loop(cond, func, loop_vars, max_iterations, name="while_loop"):
    """Declarative ``sym.contrib.while_loop``: one ``_while_loop`` node."""
    flat_vars, var_fmt = flatten(loop_vars, "while_loop loop_vars")

    def args_of(fresh):
        grouped = regroup(fresh, var_fmt)
        return [grouped] if var_fmt == 0 else grouped

    cond_name = _unique_name(name + "_cond")
    var_names = _input_names(flat_vars, set())
    c = _trace(cond_name, var_names, lambda fresh: cond(*args_of(fresh)))
    if not isinstance(c, Symbol):
        raise ControlFlowError(f"while_loop: cond must return a Symbol, got {type(c).__name__}")
    cond_sub, cond_ins = _subgraph(cond_name, [c])
    func_name = _unique_name(name + "_func")

    def call(fresh):
        from .._control_flow import _step_result

        return _step_result(func, args_of(fresh), "while_loop")

    step_out, new_vars = _trace(func_name, var_names, call)
    flat_out, out_fmt = flatten(step_out, "while_loop output")
    flat_new, _ = flatten(new_vars, "while_loop loop_vars")
    if len(flat_new) != len(flat_vars):
        raise ControlFlowError(
            f"while_loop: func returned {len(flat_new)} loop variables for {len(flat_vars)}"
        )
    func_sub, func_ins = _subgraph(func_name, flat_out + flat_new)
    var_of = {n: k for k, n in enumerate(var_names)}
    entries, (cond_locs, func_locs) = _union([(cond_ins, var_of), (func_ins, var_of)], flat_vars)
    func_names = [n for n, _ in func_ins]
    func_var_locs = []
    for k, n in enumerate(var_names):
        if n not in func_names:
            raise ControlFlowError(
                f"while_loop: the {k + 1}-th loop_var doesn't involve into the computation "
                f"(func does not use it)"
            )
        func_var_locs.append(func_names.index(n))
    n_out = len(flat_out) + len(flat_new)
    attrs = dict(num_out_data=len(flat_out), max_iterations=int(max_iterations),
                 cond_input_locs=cond_locs, func_input_locs=func_locs,
                 func_var_locs=func_var_locs)  # fmt: skip
    res = _node("_while_loop", [cond_sub, func_sub], entries, attrs, n_out)
    return regroup(res[: len(flat_out)], out_fmt), regroup(res[len(flat_out) :], var_fmt)


def cond(pred, then_func, else_func, name="cond"):
    """Declarative ``sym.contrib.cond``: one ``_cond`` node."""
    graphs, parts, fmt = [], [], None
    for suffix, fn in (("_pred", lambda: pred), ("_then", then_func), ("_else", else_func)):
        sub_name = _unique_name(name + suffix)
        outs, out_fmt = flatten(_trace(sub_name, [], lambda _f, fn=fn: fn()), f"cond{suffix}")
        if suffix == "_pred" and len(outs) != 1:
            raise ControlFlowError("cond: pred should always be a single output")
        if suffix == "_then":
            fmt, n_out = out_fmt, len(outs)
        elif suffix == "_else" and len(outs) != n_out:
            raise ControlFlowError(
                f"cond: the number of outputs differs between then_func ({n_out}) and "
                f"else_func ({len(outs)})"
            )
        sub, ins = _subgraph(sub_name, outs)
        graphs.append(sub)
        parts.append((ins, {}))
    entries, locs = _union(parts)
    attrs = dict(cond_input_locs=locs[0], then_input_locs=locs[1], else_input_locs=locs[2])
    res = _node("_cond", graphs, entries, attrs, n_out)
    return regroup(res, fmt)


install_declarative(foreach, while_loop, cond)
