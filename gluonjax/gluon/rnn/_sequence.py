"""Sequence plumbing shared by the recurrent cells (MXNet 1.x's ``rnn_cell`` helpers).

``_format_sequence`` turns a sequence given as one tensor or as a list of
per-step tensors into the form a cell wants (a list of steps, or one merged
tensor in a layout); ``_get_begin_state``, ``_mask_sequence_variable_length``
and ``_reverse_sequences`` complete ``unroll``. The names are MXNet's (gluonnlp
and other libraries import them from ``gluon.rnn.rnn_cell``).
"""

from __future__ import annotations

from ... import ndarray, symbol
from ...base import MXNetError
from ...ndarray.ndarray import NDArray
from ...symbol.symbol import Symbol

__all__ = [
    "_format_sequence",
    "_get_begin_state",
    "_mask_sequence_variable_length",
    "_reverse_sequences",
    "_cells_state_info",
    "_cells_begin_state",
    "traced",
]


def _as_list(x):
    if isinstance(x, (list, tuple)) or (isinstance(x, Symbol) and len(x._outputs) > 1):
        return list(x)
    return [x]


def traced(x):
    """Whether ``x`` (a tensor or a list of them) is a symbol carrying a value,
    i.e. we are inside a hybridized block's trace."""
    first = x[0] if isinstance(x, (list, tuple)) and x else x
    return isinstance(first, Symbol) and first._value is not None


def _cells_state_info(cells, batch_size):
    return sum((c.state_info(batch_size) for c in cells), [])


def _cells_begin_state(cells, **kwargs):
    return sum((c.begin_state(**kwargs) for c in cells), [])


def _get_begin_state(cell, F, begin_state, inputs, batch_size, layout=None):
    """``begin_state`` if given, else the cell's zero states for ``batch_size``.

    Inside a trace the zeros take their batch size from ``inputs`` (a list of steps, or
    one tensor in ``layout``) through ``broadcast_like``, so an exported graph keeps a
    free batch size.
    """
    if begin_state is not None:
        return begin_state
    if F is ndarray:
        first = inputs if isinstance(inputs, NDArray) else inputs[0]
        return cell.begin_state(
            func=ndarray.zeros, batch_size=batch_size, ctx=first.context, dtype=first.dtype
        )
    if batch_size and traced(inputs):
        tensor = isinstance(inputs, Symbol)
        first = inputs if tensor else inputs[0]
        axis = 0 if not tensor else (layout.find("N") if layout else -1)
        if axis < 0:
            return cell.begin_state(func=symbol.zeros, batch_size=batch_size, dtype=first.dtype)
        zeros = cell.begin_state(func=symbol.zeros, batch_size=1, dtype=first.dtype)
        return [symbol.broadcast_like(z, first, lhs_axes=(0,), rhs_axes=(axis,)) for z in zeros]
    return cell.begin_state(func=symbol.zeros, batch_size=batch_size)


def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """``(inputs, time axis, F, batch size)`` with ``inputs`` as a list of steps
    (``merge=False``), one tensor in ``layout`` (``merge=True``) or as given (None)."""
    if inputs is None:
        raise MXNetError(
            "unroll(inputs=None) is not supported: create the input variables and pass them"
        )
    if "T" not in layout or "N" not in layout:
        raise MXNetError(f"unroll: layout must contain 'T' and 'N' (e.g. 'NTC'), got {layout!r}")
    axis = layout.find("T")
    batch_axis = layout.find("N")
    batch_size = 0
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, Symbol):
        F = symbol
        if inputs._value is not None:
            batch_size = inputs.shape[batch_axis]
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise MXNetError(
                    "unroll does not take a grouped symbol as input: pass list(inputs), or a "
                    "single symbol for unroll to split"
                )
            if inputs._value is not None:
                _check_length(length, inputs.shape[in_axis])
            inputs = _as_list(
                symbol.split(inputs, axis=in_axis, num_outputs=length, squeeze_axis=1)
            )
    elif isinstance(inputs, NDArray):
        F = ndarray
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            _check_length(length, inputs.shape[in_axis])
            inputs = _as_list(
                ndarray.split(
                    inputs, axis=in_axis, num_outputs=inputs.shape[in_axis], squeeze_axis=1
                )
            )
    else:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise MXNetError(f"unroll: length={length} but {len(inputs)} input steps were given")
        if isinstance(inputs[0], Symbol):
            F = symbol
            if inputs[0]._value is not None:
                batch_size = inputs[0].shape[0]
        else:
            F = ndarray
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, (NDArray, Symbol)) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _check_length(length, have):
    if length is not None and length != have:
        raise MXNetError(
            f"unroll: length={length} does not match the {have} steps of the input sequence"
        )


def _mask_sequence_variable_length(F, data, length, valid_length, time_axis, merge):
    """Zero the steps at or past each sequence's ``valid_length``."""
    if valid_length is None:
        raise MXNetError("masking a variable-length sequence needs valid_length")
    if not isinstance(data, (NDArray, Symbol)):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(
        data, sequence_length=valid_length, use_sequence_length=True, axis=time_axis
    )
    if not merge:
        outputs = _as_list(F.split(outputs, num_outputs=length, axis=time_axis, squeeze_axis=True))
    return outputs


def _reverse_sequences(sequences, unroll_step, valid_length=None):
    """The list of steps reversed (each sequence within its own length)."""
    F = symbol if isinstance(sequences[0], Symbol) else ndarray
    if valid_length is None:
        return list(reversed(sequences))
    rev = F.SequenceReverse(
        F.stack(*sequences, axis=0), sequence_length=valid_length, use_sequence_length=True
    )
    if unroll_step > 1 or F is symbol:
        return _as_list(F.split(rev, axis=0, num_outputs=unroll_step, squeeze_axis=True))
    return [rev[0]]
