"""The data-loader worker process: ``batchify([dataset[i] for i in indices])`` on request.

Started by :mod:`gluonjax._data.pool` as a fresh interpreter (never a fork of a
process running jax). It receives the pickled data set and batchify function
once, then answers task messages with batches (numpy buffers sent out of band) or
with the error, its traceback and the index of the sample that raised it. It
exits when its parent closes the pipe or dies.
"""

from __future__ import annotations

import io
import multiprocessing.spawn
import os
import pickle
import random
import signal
import sys
import traceback

import numpy as np

from . import batch as _batch
from . import lite, rng, transport
from .batch import Batch
from .transport import Channel


class _Unpickler(pickle.Unpickler):
    def __init__(self, data, main):
        super().__init__(io.BytesIO(data))
        self._main = main  # multiprocessing.spawn's description of the parent's __main__

    def find_class(self, module, name):
        if lite.is_lite() and not lite.module_is_lite(module):
            lite.upgrade()
        if module == "__main__":  # load it as __mp_main__, as spawn does (only when needed)
            multiprocessing.spawn.prepare(self._main)
        return super().find_class(module, name)


class _ResultPickler(pickle.Pickler):
    def reducer_override(self, obj):
        if type(obj).__module__ == "gluonjax.ndarray.ndarray" or (
            hasattr(obj, "_data") and hasattr(obj, "asnumpy") and hasattr(obj, "context")
        ):
            return Batch(np.asarray(obj._data)).__reduce__()
        return NotImplemented


def _dump(obj):
    buffers = []
    f = io.BytesIO()
    _ResultPickler(f, protocol=5, buffer_callback=buffers.append).dump(obj)
    return f.getvalue(), buffers


def _die_with_parent():
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:  # not Linux: the closed pipe still ends the worker
        pass


def _error_info(err, sample, indices):
    return {
        "type": type(err).__name__,
        "bases": [c.__name__ for c in type(err).__mro__],
        "message": str(err),
        "traceback": traceback.format_exc(),
        "sample": sample,
        "indices": list(indices),
        "pid": os.getpid(),
    }


def _seed(seed):
    random.seed(seed)
    np.random.seed(seed % (1 << 32))
    rng.seed(seed)
    if not lite.is_lite():
        sys.modules["gluonjax"].random.seed(seed % (1 << 31))


def serve(conn):
    """Answer tasks on ``conn`` until it closes."""
    _batch.IN_WORKER[0] = True
    channel = Channel(conn)
    transport._WORKER[:] = [channel]
    init = pickle.loads(conn.recv_bytes())
    sys.path[:] = init["sys_path"]
    failed = None
    try:
        if init["full"]:
            lite.upgrade()
        dataset, batchify_fn = _Unpickler(init["payload"], init["main"]).load()
        if batchify_fn is None:
            batchify_fn = _batch.default_batchify
        _seed(init["seed"])
    except Exception as err:  # reported with the first task
        failed = _error_info(err, None, ())
        failed["message"] = f"the worker could not load the data set: {failed['message']}"
    while True:
        try:
            msg = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        _, key, indices, freed = msg
        channel.give_back(freed)
        if failed is not None:
            channel.send(("err", key, dict(failed, indices=list(indices))))
            continue
        sample = None
        try:
            samples = []
            for i in indices:
                sample = i
                samples.append(dataset[i])
            sample = None
            body, buffers = _dump(batchify_fn(samples))
            channel.send(("ok", key), body, buffers)
        except Exception as err:
            channel.send(("err", key, _error_info(err, sample, indices)))


def main(fd):
    """Entry point of the worker (``fd``: its end of the pipe to the parent)."""
    from multiprocessing.connection import Connection

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    conn = Connection(int(fd))
    try:
        serve(conn)
    except (EOFError, OSError, KeyboardInterrupt):
        pass
