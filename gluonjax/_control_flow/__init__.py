"""``F.contrib.foreach`` / ``while_loop`` / ``cond`` for NDArrays and Symbols.

Three paths, chosen by the inputs:

- NDArrays: Python control flow (as MXNet's ``nd.contrib``), so autograd records
  every step;
- Symbols carrying values (inside a hybridized block's trace): ``lax.scan`` /
  a masked ``lax.scan`` of ``max_iterations`` steps / ``lax.cond``
  (:mod:`.lax`), so value-dependent control flow compiles and
  differentiates;
- declarative Symbols: a ``_foreach`` / ``_while_loop`` / ``_cond`` node whose loop
  body and branches are subgraphs (built by ``symbol/_control_flow.py``, installed
  with :func:`install_declarative`), which bind, differentiate and save to JSON.

Inputs, states and outputs may be nested lists; results keep MXNet's formats
(:func:`flatten` / :func:`regroup`). This module sits below ``nd`` and ``sym``:
each hands itself in (:func:`install`).

Examples
--------
>>> import gluonjax as mx
>>> outs, states = mx.nd.contrib.foreach(
...     lambda x, s: (x + s[0], [s[0] * 2]), mx.nd.array([1.0, 2.0]), [mx.nd.array([1.0])])
>>> outs.asnumpy().tolist(), states[0].asnumpy().tolist()
([[2.0], [4.0]], [4.0])
"""

from __future__ import annotations

from .._step_keys import step_keys  # noqa: F401  (re-exported: recurrent layers use it)
from ..base import ControlFlowError, MXNetError

__all__ = ["cond", "while_loop", "foreach", "flatten", "regroup", "install"]

_F = {}  # symbolic (bool) -> nd / sym module, filled by install()
_DECLARATIVE = {}  # "foreach"/"while_loop"/"cond" -> builder for declarative symbols


def install(F, symbolic):  # noqa: N803  (MXNet's name for nd / sym)
    """Hand in ``F`` (``gluonjax.ndarray`` or ``gluonjax.symbol``) for its kind of values."""
    _F[bool(symbolic)] = F


def install_declarative(foreach_fn, while_loop_fn, cond_fn):
    """Hand in the builders of ``_foreach``/``_while_loop``/``_cond`` graph nodes."""
    _DECLARATIVE.update(foreach=foreach_fn, while_loop=while_loop_fn, cond=cond_fn)


def _is_sym(x):
    return hasattr(x, "_outputs")


def _is_leaf(x):
    return _is_sym(x) or hasattr(x, "_data")


def flatten(args, what):
    """``(flat list of arrays, format)``: format 0 for one array, a list of formats for
    a (nested) list or tuple, as MXNet's ``_flatten``."""
    if _is_leaf(args):
        return [args], 0
    if not isinstance(args, (list, tuple)):
        raise ControlFlowError(
            f"{what} must be an NDArray/Symbol or a (nested) list of them, got "
            f"{type(args).__name__} {args!r}"
        )
    flat, fmts = [], []
    for item in args:
        f, fmt = flatten(item, what)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def regroup(flat, fmt):
    """The nesting ``fmt`` (from :func:`flatten`) rebuilt from the flat list ``flat``."""

    def take(items, f):
        if f == 0:
            return items[0], items[1:]
        out = []
        for sub in f:
            res, items = take(items, sub)
            out.append(res)
        return out, items

    return take(list(flat), fmt)[0]


def _path(*groups):
    """ "nd", "traced" or "declarative" for the arrays of ``groups``."""
    flat = [x for g in groups for x in flatten(g, "control-flow input")[0]]
    syms = [x for x in flat if _is_sym(x)]
    if not syms:
        return "nd"
    if all(s._value is not None for s in syms):
        return "traced"
    return "declarative"


def foreach(body, data, init_states, name="foreach"):
    """Run ``body(data[i], states) -> (out, new states)`` over the first axis of ``data``.

    Parameters
    ----------
    body : callable
        ``body(data slice(s), states) -> (outputs, new states)``; each may be an array
        or a (nested) list of arrays, the states keeping the format of ``init_states``.
    data : NDArray, Symbol or list of them
        Sliced along axis 0 (all with the same length).
    init_states : NDArray, Symbol or (nested) list of them
        The states of the first step.
    name : str
        The name of the loop (symbols only).

    Returns
    -------
    (outputs stacked along axis 0, final states)
        In the formats the body returns them.
    """
    path = _path(data, init_states)
    if path == "declarative":
        return _DECLARATIVE["foreach"](body, data, init_states, name)
    if path == "traced":
        from .lax import foreach as traced

        return traced(_F[True], body, data, init_states)
    F = _F[False]  # noqa: N806
    flat_data, _ = flatten(data, "foreach data")
    flatten(init_states, "foreach init_states")
    length = flat_data[0].shape[0]
    states, outputs, out_fmt = init_states, [], 0
    for i in range(length):
        eles = data[i] if _is_leaf(data) else [d[i] for d in data]
        outs, states = body(eles, states)
        outs, out_fmt = flatten(outs, "foreach output")
        outputs.append(outs)
    stacked = [F.stack(*items, axis=0) for items in zip(*outputs)]
    return (regroup(stacked, out_fmt) if outputs else []), states


def _scalar(value, type_, what):
    if hasattr(value, "asscalar"):
        value = value.asscalar()
    try:
        return type_(value)
    except (TypeError, ValueError):
        raise ControlFlowError(f"cannot convert {what} {value!r} to {type_.__name__}") from None


def _step_result(func, loop_vars, what):
    step_output, new_vars = func(*loop_vars)
    step_output = [] if step_output is None else step_output
    new_vars = [] if new_vars is None else new_vars
    if isinstance(step_output, tuple):
        step_output = list(step_output)
    if isinstance(new_vars, tuple):
        new_vars = list(new_vars)
    new_vars = new_vars if isinstance(new_vars, list) else [new_vars]
    if len(new_vars) != len(loop_vars):
        raise ControlFlowError(
            f"{what}: func returned {len(new_vars)} loop variables for {len(loop_vars)} "
            f"(the number of loop_vars must stay the same during the loop)"
        )
    return step_output, new_vars


def while_loop(cond, func, loop_vars, max_iterations=None, name="while_loop"):
    """Run ``func(*vars) -> (step output, new vars)`` while ``cond(*vars)`` is non-zero,
    at most ``max_iterations`` times.

    Parameters
    ----------
    cond : callable
        ``cond(*loop_vars)`` -> a one-element array.
    func : callable
        ``func(*loop_vars) -> (step outputs, new loop_vars)``; either may be None, an
        array or a (nested) list.
    loop_vars : NDArray, Symbol or (nested) list of them
    max_iterations : int
        Required: the outputs are stacked to this many rows (zeros after the last step).
    name : str
        The name of the loop (symbols only).

    Returns
    -------
    (stacked outputs, final loop variables)
        For NDArrays the outputs are ``[]`` when no step ran, as in MXNet.
    """
    if max_iterations is None:
        raise ControlFlowError(
            "while_loop: max_iterations should be specified (the outputs are stacked to "
            "max_iterations rows)"
        )
    max_iterations = _scalar(max_iterations, int, "max_iterations")
    if isinstance(loop_vars, (list, tuple)) and len(loop_vars) == 0:
        raise ControlFlowError("while_loop: loop_vars should contain at least one element")
    path = _path(loop_vars)
    if path == "declarative":
        return _DECLARATIVE["while_loop"](cond, func, loop_vars, max_iterations, name)
    if path == "traced":
        from .lax import while_loop as traced

        return traced(_F[True], cond, func, loop_vars, max_iterations)
    F = _F[False]  # noqa: N806
    single = _is_leaf(loop_vars)
    lvars = [loop_vars] if single else loop_vars
    steps, outputs, out_fmt = 0, [], None
    while steps < max_iterations and _scalar(cond(*lvars), bool, "the return value of cond"):
        step_output, lvars = _step_result(func, lvars, "while_loop")
        step_output, out_fmt = flatten(step_output, "while_loop output")
        if outputs and len(step_output) != len(outputs[0]):
            raise ControlFlowError(
                "while_loop: the number of step outputs must be the same in every step"
            )
        outputs.append(step_output)
        steps += 1
    stacked = []
    for k, items in enumerate(zip(*outputs)):
        rows = [x.expand_dims(0) for x in items]
        if steps != max_iterations:
            rows.append(F.zeros((max_iterations - steps,) + items[0].shape, dtype=items[0].dtype))
        try:
            stacked.append(F.concat(*rows, dim=0))
        except MXNetError as err:
            shapes = [tuple(x.shape) for x in items]
            raise ControlFlowError(
                f"while_loop: the shapes of step output {k} differ between steps: {shapes}"
            ) from err
    if out_fmt is not None:
        stacked = regroup(stacked, out_fmt)
    return stacked, (lvars[0] if single else lvars)


def cond(pred, then_func, else_func, name="cond"):
    """``then_func()`` if ``pred`` is non-zero, else ``else_func()``.

    Parameters
    ----------
    pred : NDArray or Symbol
        A one-element condition.
    then_func, else_func : callable
        No-argument functions returning an array or a (nested) list of arrays, with
        the same shapes and dtypes in both branches.
    name : str
        The name of the branch (symbols only).

    Returns
    -------
    The outputs of the branch taken, in the format ``then_func`` returns.

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.array([2.0])
    >>> mx.nd.contrib.cond(x > 1, lambda: x * 10, lambda: x).item()
    20.0
    """
    if not _is_leaf(pred):
        raise ControlFlowError(
            f"cond: pred must be an NDArray or Symbol, got {type(pred).__name__}"
        )
    path = _path(pred)
    if path == "declarative":
        return _DECLARATIVE["cond"](pred, then_func, else_func, name)
    if path == "traced":
        from .lax import cond as traced

        return traced(_F[True], pred, then_func, else_func)
    if pred.size != 1:
        raise ControlFlowError(f"cond: pred must have one element, got shape {pred.shape}")
    return then_func() if _scalar(pred, bool, "pred") else else_func()
