"""``mx.mon.Monitor``: statistics of an executor's arrays every few batches, for debugging.

Installed on executors (``module.install_monitor(mon)``), it collects, for the
batches between :meth:`Monitor.tic` and :meth:`Monitor.toc`, ``stat_func`` of every
internal output of the forward pass, of the gradient each op passes to each input
in the backward pass (``<node>_backward_output<k>``), and of the arguments and
auxiliary states, when their names match ``pattern``.
"""

from __future__ import annotations

import logging
import math
import re

from .ndarray import NDArray

__all__ = ["Monitor"]


def _default_stat(x):
    """``norm(x) / sqrt(size(x))``."""
    from . import ndarray as nd

    return nd.norm(x) / math.sqrt(x.size)


class Monitor:
    """Collect statistics of executor arrays every ``interval`` batches.

    Parameters
    ----------
    interval : int
        Collect on batches ``0, interval, 2 * interval...`` (counted by :meth:`tic`).
    stat_func : callable, optional
        ``NDArray -> NDArray`` (or list of them); default ``norm(x)/sqrt(x.size)``.
    pattern : str, default '.*'
        Regular expression the names must match (``'.*backward.*'``: gradients only).
    sort : bool, default False
        Sort the results by name.
    monitor_all : bool, default False
        Also report the inputs of every op in the forward pass.
    """

    def __init__(self, interval, stat_func=None, pattern=".*", sort=False, monitor_all=False):
        self.stat_func = _default_stat if stat_func is None else stat_func
        self.interval = interval
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

    def stat_helper(self, name, array):
        """The executor callback: record ``stat_func(array)`` while active."""
        if self.activated and self.re_prog.match(name):
            self.queue.append((self.step, name, self.stat_func(array)))

    def install(self, exe):
        """Attach to executor ``exe``."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def tic(self):
        """Start a batch (call before forward); collecting when the step is due."""
        if self.step % self.interval == 0:
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """End the batch: ``[(step, name, 'stat values')]`` collected since :meth:`tic`."""
        if not self.activated:
            return []
        for exe in self.exes:
            for name, array in zip(exe._symbol.list_arguments(), exe.arg_arrays, strict=False):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
            aux_names = exe._symbol.list_auxiliary_states()
            for name, array in zip(aux_names, exe.aux_arrays, strict=False):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda item: item[1])
        res = []
        for step, name, values in self.queue:
            values = [values] if isinstance(values, NDArray) else list(values)
            text = ""
            for v in values:
                text += (str(v.asscalar()) if v.shape == (1,) else str(v.asnumpy())) + "\t"
            res.append((step, name, text))
        self.queue = []
        return res

    def toc_print(self):
        """:meth:`toc` and log each result."""
        for step, name, text in self.toc():
            logging.info("Batch: %7d %-30s %s", step, name, text)
