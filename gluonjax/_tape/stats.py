"""Moving statistics that move when the backward runs, as in MXNet 1.x.

MXNet 1.x updates BatchNorm's ``moving_mean``/``moving_var`` in the operator's
backward pass: a training-mode forward that is not recorded, or recorded but never
backpropagated, leaves them as they were, and a backward moves them once per node it
runs through (later-recorded nodes first). A recorded training-mode call with such
states (an eager BatchNorm op, a hybridized block holding BatchNorms) therefore keeps
its new values as a :class:`StatWrite` on its tape node; the engine calls
:func:`apply_writes` on the nodes a backward reaches.

Imports no ``NDArray``: the targets are read and written through ``_data`` only.
"""

from __future__ import annotations

import itertools

__all__ = ["StatWrite", "apply_writes"]

_SEQ = itertools.count()


class StatWrite:
    """The pending write of one recorded call's moving statistics.

    Parameters
    ----------
    targets : list
        The arrays (NDArray-like, with ``_data``) that hold the statistics.
    old : tuple
        Their values when the forward ran.
    new : tuple
        The values the forward computed from ``old``.
    redo : callable
        ``redo(current values) -> new values``: the same update applied to the
        statistics as they are now (when another write moved them since the forward,
        or a ``retain_graph`` backward runs the node again).
    """

    __slots__ = ("targets", "old", "new", "redo", "seq")

    def __init__(self, targets, old, new, redo):
        self.targets, self.old, self.new, self.redo = targets, tuple(old), tuple(new), redo
        self.seq = next(_SEQ)

    def apply(self):
        """Write the statistics into the targets.

        Returns
        -------
        None
        """
        cur = [t._data for t in self.targets]
        if all(c is o for c, o in zip(cur, self.old)):
            vals = self.new
        else:
            vals = self.redo(cur)
        for t, v, c in zip(self.targets, vals, cur):
            t._data = v if v.dtype == c.dtype else v.astype(c.dtype)


def apply_writes(nodes):
    """Apply the pending statistics writes of ``nodes`` (those a backward runs
    through), the latest recorded first, as MXNet's backward runs them.

    Parameters
    ----------
    nodes : iterable of Node

    Returns
    -------
    None
    """
    found = [n.writes for n in nodes if n.writes is not None]
    if len(found) > 1:
        found.sort(key=lambda w: -w.seq)
    for w in found:
        w.apply()
