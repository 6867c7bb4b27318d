"""``unroll`` inside a hybridized trace: one ``lax.scan`` over the cell's step.

Eagerly (NDArrays) and on declarative symbols ``unroll`` is MXNet's Python
loop of steps. While a hybridized block is traced (symbols carry jax values) a
loop would put ``length`` copies of the step into the compiled program; here
the first step runs in Python (it creates what a cell keeps for the whole
sequence, e.g. variational dropout masks, and fixes the states' dtypes) and
the remaining steps are one ``lax.scan`` whose body is the cell's step.

Two things a traced step may not keep in Python are threaded through the scan:

* per-step Python state declared by a cell in ``_step_state`` (ZoneoutCell's
  previous output) is part of the scan carry;
* random ops (DropoutCell, ZoneoutCell) draw from a key folded with the step
  number, so each step gets fresh randomness, as MXNet's loop does.

The glue around the scan (stacking, masking, layout) is made of registry ops,
so ``export`` writes MXNet graph nodes for it, and the exporter unrolls the
scan into the steps' nodes.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..._control_flow import step_keys
from ...symbol.symbol import Symbol, var
from ._sequence import _format_sequence, _get_begin_state, traced

__all__ = ["scan_unroll", "can_scan"]


def can_scan(inputs, length):
    """Whether ``unroll`` should scan: inside a trace, more than one step."""
    return length is not None and length > 1 and traced(inputs)


def _wrap(v):
    return Symbol(var("_step")._outputs, value=v)


def _raw(s):
    return s._value


def _step_slots(cell):
    """``[(cell, attribute)]`` of per-step Python state in ``cell`` and its children."""
    out = [(cell, name) for name in getattr(type(cell), "_step_state", ())]
    for child in cell._children.values():
        out.extend(_step_slots(child))
    return out


def scan_unroll(cell, length, inputs, begin_state, layout, merge_outputs, valid_length):
    """``cell.unroll`` for traced symbols (see the module docstring)."""
    inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, True)
    begin_state = _get_begin_state(cell, F, begin_state, inputs, batch_size, layout)
    x = inputs if axis == 0 else F.swapaxes(inputs, dim1=0, dim2=axis)
    first = F.squeeze(F.slice_axis(x, axis=0, begin=0, end=1), axis=0)
    rest = F.slice_axis(x, axis=0, begin=1, end=None)
    out0, states = cell(first, list(begin_state))
    states = list(states)
    slots = [(c, n) for c, n in _step_slots(cell) if getattr(c, n, None) is not None]
    extras0 = [_raw(getattr(c, n)) for c, n in slots]
    keep_states = valid_length is not None

    def body(carry, x_t):
        st, extras, t = carry
        with step_keys(t):
            for (c, n), v in zip(slots, extras):
                object.__setattr__(c, n, _wrap(v))
            out, new = cell(_wrap(x_t), [_wrap(s) for s in st])
            new = [_raw(s) for s in new]
            new_extras = [_raw(getattr(c, n)) for c, n in slots]
        return (new, new_extras, t + 1), (_raw(out), new if keep_states else [])

    carry0 = ([_raw(s) for s in states], extras0, jnp.asarray(1, jnp.int32))
    (final, extras, _), (ys, ys_states) = jax.lax.scan(body, carry0, _raw(rest))
    for (c, n), v in zip(slots, extras):
        object.__setattr__(c, n, _wrap(v))
    outputs = F.concat(F.expand_dims(out0, axis=0), _wrap(ys), dim=0)
    if keep_states:
        final_states = []
        for s0, seq in zip(states, ys_states):
            stacked = F.concat(F.expand_dims(s0, axis=0), _wrap(seq), dim=0)
            final_states.append(
                F.SequenceLast(
                    stacked, sequence_length=valid_length, use_sequence_length=True, axis=0
                )
            )
        outputs = F.SequenceMask(
            outputs, sequence_length=valid_length, use_sequence_length=True, axis=0
        )
    else:
        final_states = [_wrap(s) for s in final]
    if merge_outputs:
        if axis != 0:
            outputs = F.swapaxes(outputs, dim1=0, dim2=axis)
        return outputs, final_states
    steps = F.split(outputs, num_outputs=length, axis=0, squeeze_axis=True)
    return (list(steps) if length > 1 else [steps]), final_states
