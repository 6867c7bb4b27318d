"""``RecurrentCell`` and ``HybridRecurrentCell``: the cell API (MXNet 1.x).

A cell computes one time step, ``cell(x_t, states) -> (output, new_states)``;
``begin_state`` makes its initial states, ``state_info`` describes them and
``unroll`` runs a whole sequence (MXNet's loop of steps eagerly and on
declarative symbols; one ``lax.scan`` inside a hybridized trace, see
:mod:`._scan`).

A hybrid cell's states travel as separate arguments through the block machinery
(``cell(x, [h, c])`` calls the block with ``x, h, c``), so a hybridized cell is
one compiled call; ``hybrid_forward(F, inputs, states, **params)`` still gets
them as one list, as in MXNet.
"""

from __future__ import annotations

import functools

from ... import ndarray
from ..._tape import state as _trace
from ...base import MXNetError
from ...ndarray.ndarray import NDArray
from ...symbol.symbol import Symbol
from ..block import Block
from ..hybrid import HybridBlock
from ..nn import LeakyReLU
from ._scan import can_scan, scan_unroll
from ._sequence import _format_sequence, _get_begin_state, _mask_sequence_variable_length

__all__ = ["RecurrentCell", "HybridRecurrentCell", "ModifiedCellError", "current_trace_value"]


class ModifiedCellError(MXNetError):
    """A cell wrapped by a modifier (ZoneoutCell, ResidualCell...) was used directly."""


def _check_unmodified(cell):
    if cell._modified:
        raise ModifiedCellError(
            f"{type(cell).__name__} '{cell.name}' is wrapped by a modifier cell (e.g. "
            f"ZoneoutCell); call the modifier cell instead of the base cell"
        )


def _has_value(x):
    if isinstance(x, NDArray):
        return True
    return isinstance(x, Symbol) and x._value is not None


def current_trace_value(value, scope):
    """``value`` (state a cell kept from an earlier step) if it can be used now: a value
    traced inside another trace (an earlier compile of a hybridized cell) reads as
    None, as MXNet's cached graph of a hybridized cell only sees its first step's state."""
    if isinstance(value, Symbol) and value._value is not None and scope is not _trace.current():
        return None
    return value


class RecurrentCell(Block):
    """Abstract base class of recurrent cells.

    Parameters
    ----------
    prefix : str, optional
        Prefix of the cell's blocks and parameters.
    params : ParameterDict, optional
        Share parameters with another cell.
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step counters (and children's) before a new sequence."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            if hasattr(cell, "reset"):
                cell.reset()

    def state_info(self, batch_size=0):
        """``[{'shape': ..., '__layout__': ...}]``, one dict per state."""
        raise NotImplementedError(f"{type(self).__name__} must define state_info()")

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """The initial states: ``func(name=..., shape=..., **kwargs)`` per state.

        Parameters
        ----------
        batch_size : int
            Size of the batch ('N' of the layout); 0 (unknown) for symbols.
        func : callable, default ``nd.zeros``
            ``nd.zeros``/``nd.ones``/``sym.zeros``/``sym.var``...
        **kwargs
            More arguments for ``func`` (``ctx``, ``dtype``...).

        Returns
        -------
        list of NDArray or Symbol
        """
        _check_unmodified(self)
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info or {})
            info.update(kwargs)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}", **info))
        return states

    def unroll(
        self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None
    ):
        """Run the cell over ``length`` steps.

        Parameters
        ----------
        length : int
            Number of steps.
        inputs : NDArray, Symbol or list of them
            One tensor in ``layout`` or a list of ``length`` per-step tensors (N, ...).
        begin_state : list, optional
            Initial states (default: :meth:`begin_state` zeros).
        layout : str, default 'NTC'
            Layout of ``inputs`` and of merged outputs.
        merge_outputs : bool, optional
            True: one tensor in ``layout``; False: a list of steps; None: what is
            cheapest (a list for a plain cell).
        valid_length : NDArray or Symbol, optional
            Lengths (N,) of the sequences: later outputs are zeros and the returned
            states are those of each sequence's last valid step.

        Returns
        -------
        (outputs, states)
        """
        self.reset()
        if can_scan(inputs, length):
            return scan_unroll(
                self, length, inputs, begin_state, layout, merge_outputs, valid_length
            )
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size, layout)
        outputs, all_states = [], []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [
                F.SequenceLast(
                    F.stack(*steps, axis=0),
                    sequence_length=valid_length,
                    use_sequence_length=True,
                    axis=0,
                )
                for steps in zip(*all_states)
            ]
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, True)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        """Apply ``activation``: a name, a LeakyReLU block or any callable."""
        func = (
            {"tanh": F.tanh, "relu": F.relu, "sigmoid": F.sigmoid, "softsign": F.softsign}.get(
                activation
            )
            if isinstance(activation, str)
            else None
        )
        if func is not None:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs, states):
        """One step: ``(output, new_states)``."""
        self._counter += 1
        return super().forward(inputs, states)


def _regroup_states(hybrid_forward):
    """Let ``hybrid_forward(F, inputs, states, **params)`` take the states that the
    block machinery passes as separate arguments, as one list."""

    @functools.wraps(hybrid_forward)
    def wrapper(self, F, inputs, *states, **params):
        if len(states) == 1 and isinstance(states[0], (list, tuple)):
            states = states[0]
        return hybrid_forward(self, F, inputs, list(states), **params)

    wrapper._regroups_states = True
    return wrapper


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell that can be hybridized (its step is one compiled call)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        hf = cls.__dict__.get("hybrid_forward")
        if hf is not None and not getattr(hf, "_regroups_states", False):
            cls.hybrid_forward = _regroup_states(hf)

    def __call__(self, inputs, states=None, *args, **kwargs):
        self._counter += 1
        if states is None:
            states = []
        elif not isinstance(states, (list, tuple)):
            states = [states]
        self._input_shape_known(inputs)
        return HybridBlock.__call__(self, inputs, *states, *args, **kwargs)

    # Parameters whose shape is (rows, 0) until the input size is known (built-in cells:
    # i2h_weight); their shape comes from the step input (flattened, as FullyConnected).
    _deferred_input = ()

    def _input_shape_known(self, inputs):
        shape = getattr(inputs, "shape", None) if _has_value(inputs) else None
        if shape is None or len(shape) < 2:
            return
        n = 1
        for d in shape[1:]:
            n *= d
        for name in self._deferred_input:
            p = getattr(self, name)
            if p._data is None and p._deferred is not None and p.shape and not p.shape[-1]:
                p._finish_deferred_init(tuple(p.shape[:-1]) + (n,))

    # HybridBlock's forward (hybrid_forward style); the step counter moves in __call__
    forward = HybridBlock.forward

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError(
            f"{type(self).__name__} must define hybrid_forward(self, F, inputs, states, ...)"
        )
