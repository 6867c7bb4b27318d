"""Worker processes of ``DataLoader(num_workers > 0)``: started fresh, never forked.

A process that runs jax holds threads and locks that a ``fork`` copies in an
unusable state, so a forked data-loader worker can deadlock. These workers are
new interpreters (``python -c``) that receive the data set and batchify function
pickled once; the vision transforms travel as their host (numpy) versions and
NDArrays as numpy arrays, so the workers run jax-free unless user code needs
gluonjax (:mod:`gluonjax._data.lite`). Each worker answers its tasks in order;
task ``k`` goes to worker ``k % num_workers``, so batches come back in order and
the random streams (seeded from numpy's global generator) are reproducible.

Not ``multiprocessing``'s spawn or forkserver: their children run the parent's
``__main__`` first, so a script without the ``if __name__ == "__main__":`` guard
(which MXNet's forked workers run) fails, and a script's ``import gluonjax`` loads
jax in every worker. Here spawn's own code loads ``__main__`` only for a data set
that needs a class of it.
"""

from __future__ import annotations

import builtins
import io
import os
import pickle
import subprocess
import sys
import time
import types
import weakref
from multiprocessing.connection import Pipe

import numpy as np

from ..base import MXNetError
from . import batch, lite
from .transport import Channel

_BOOT = (
    "import importlib.util as u, sys\n"
    "s = u.spec_from_file_location('gluonjax._data.lite', sys.argv[1])\n"
    "m = u.module_from_spec(s); sys.modules[s.name] = m; s.loader.exec_module(m)\n"
    "sys.path[:0] = [sys.argv[2]]\n"
    "m.enter()\n"
    "from gluonjax._data.worker import main\n"
    "main(sys.argv[3])\n"
)


class DataLoaderError(MXNetError):
    """A data-loader worker failed, died or timed out (the message says which and where)."""


class DataLoaderTimeoutError(DataLoaderError, TimeoutError):
    """No batch arrived from a worker within ``timeout`` seconds."""


def worker_error(info, worker):
    """The exception to raise in the main process for a worker's error ``info``."""
    where = (
        f"while loading sample {info['sample']}"
        if info["sample"] is not None
        else f"while batching samples {info['indices']}"
    )
    msg = (
        f"DataLoader worker {worker} (pid {info['pid']}) raised {info['type']} {where}: "
        f"{info['message']}\n--- worker traceback ---\n{info['traceback']}"
    )
    base = DataLoaderError
    for name in info["bases"]:
        cls = vars(builtins).get(name)
        if isinstance(cls, type) and issubclass(cls, Exception) and cls is not Exception:
            try:
                base = type(f"DataLoader{name}", (DataLoaderError, cls), {})
            except TypeError:
                continue
            break
    err = base(msg)
    err.sample_index = info["sample"]
    err.worker_traceback = info["traceback"]
    return err


class _PayloadPickler(pickle.Pickler):
    """Pickles the data set for the workers: host versions of transforms, NDArrays as numpy."""

    def __init__(self, f):
        super().__init__(f, protocol=pickle.HIGHEST_PROTOCOL)
        self.modules = set()

    def reducer_override(self, obj):
        if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
            self.modules.add(getattr(obj, "__module__", None) or "__main__")
            return NotImplemented
        twin = getattr(type(obj), "_host_twin", None)
        if twin is not None:
            host = obj._host_twin()
            if host is not None:
                from .host import rebuild

                return (rebuild, (type(host), dict(vars(host))))
        if type(obj).__module__ == "gluonjax.ndarray.ndarray" or _is_ndarray(obj):
            from .host import item

            return (item, (np.asarray(obj._data),))
        return NotImplemented


def _is_ndarray(obj):
    mod = sys.modules.get("gluonjax.ndarray.ndarray")
    return mod is not None and isinstance(obj, mod.NDArray)


def payload(dataset, batchify_fn):
    """``(bytes, needs_full_gluonjax)`` for the workers; raises pickling errors."""
    f = io.BytesIO()
    p = _PayloadPickler(f)
    p.dump((dataset, batchify_fn))
    full = any(not lite.module_is_lite(m) for m in p.modules)
    return f.getvalue(), full


def _main_spec():
    """This process's ``__main__`` as ``multiprocessing.spawn.prepare`` takes it."""
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None:
        return {"init_main_from_name": name}
    path = getattr(main, "__file__", None)
    return {"init_main_from_path": os.path.abspath(path)} if path else {}


def _worker_env():
    """The workers' environment: the parent's, and glibc's allocator told to keep freed
    memory. A worker allocates and frees a batch worth of samples (tens of MB) per task;
    by default glibc hands that back to the system and every sample's first writes
    fault the pages in again, which costs as much as decoding the JPEG."""
    env = dict(os.environ)
    env.setdefault("MALLOC_MMAP_THRESHOLD_", str(16 << 20))
    env.setdefault("MALLOC_TRIM_THRESHOLD_", str(512 << 20))
    return env


def _shutdown(procs, conns, channels):
    for c in channels + conns:  # every handle on the sockets: the workers see EOF
        try:
            c.close()
        except OSError:
            pass
    deadline = time.monotonic() + 1.0
    for p in procs:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class WorkerPool:
    """``num_workers`` worker processes serving ``batchify_fn([dataset[i] ...])``.

    ``batchify_fn=None`` means MXNet's default batching, done with numpy in the worker.
    """

    def __init__(self, num_workers, data, full, seed):
        if batch.IN_WORKER[0]:
            raise DataLoaderError(
                f"DataLoader(num_workers={num_workers}) in a DataLoader worker: workers cannot "
                "start workers. If the worker is running your script's top level (to load a class "
                "of the data set defined there), put that code under `if __name__ == "
                "'__main__':`; otherwise use num_workers=0 or thread_pool=True there."
            )
        here = os.path.dirname(os.path.abspath(__file__))
        root = os.path.dirname(os.path.dirname(here))
        init = {"sys_path": list(sys.path), "main": _main_spec(), "payload": data, "full": full}
        self.num_workers = num_workers
        self.procs, self.conns, self.channels = [], [], []
        try:
            for wid in range(num_workers):
                mine, theirs = Pipe()
                proc = subprocess.Popen(
                    [sys.executable, "-c", _BOOT, os.path.join(here, "lite.py"), root]
                    + [str(theirs.fileno())],
                    pass_fds=(theirs.fileno(),),
                    stdin=subprocess.DEVNULL,
                    env=_worker_env(),
                )
                theirs.close()
                self.procs.append(proc)
                self.conns.append(mine)
                self.channels.append(Channel(mine))
                mine.send_bytes(pickle.dumps(dict(init, seed=int(seed) + wid)))
        except BaseException:
            _shutdown(self.procs, self.conns, self.channels)
            raise
        self.broken = None
        self._owner = {}
        self._results = {}
        self._dropped = set()
        self._count = 0
        self._finalizer = weakref.finalize(self, _shutdown, self.procs, self.conns, self.channels)

    def submit(self, key, indices):
        """Queue ``batchify([dataset[i] for i in indices])`` under ``key``."""
        if self.broken:
            raise DataLoaderError(f"the DataLoader's workers are stopped: {self.broken}")
        wid = self._count % self.num_workers
        self._count += 1
        self._owner[key] = (wid, list(indices))
        freed = self.channels[wid].take_freed()  # shared-memory slots to reuse
        self.conns[wid].send_bytes(pickle.dumps(("task", key, list(indices), freed)))

    def _read(self, wid, timeout):
        if not self.conns[wid].poll(timeout):
            return None
        return self.channels[wid].recv()

    def get(self, key, timeout):
        """The batch made for ``key`` (waits at most ``timeout`` seconds)."""
        wid, indices = self._owner[key]
        deadline = time.monotonic() + timeout
        while key not in self._results:
            left = deadline - time.monotonic()
            try:
                msg = self._read(wid, max(0.0, left))
            except (EOFError, OSError):
                code = self.procs[wid].poll()
                self.stop(f"worker {wid} died")
                raise DataLoaderError(
                    f"DataLoader worker {wid} (pid {self.procs[wid].pid}) exited unexpectedly "
                    f"(exit code {code}) while making the batch of samples {indices}"
                ) from None
            if msg is None:
                self.stop(f"worker {wid} timed out")
                raise DataLoaderTimeoutError(
                    f"DataLoader worker {wid} (pid {self.procs[wid].pid}) returned no batch in "
                    f"{timeout} s (samples {indices}). A slow transform needs a larger "
                    f"`timeout=`; the workers were stopped."
                )
            head, body, buffers = msg
            done = head[1]
            if done in self._dropped:
                self._dropped.discard(done)
                self._owner.pop(done, None)
            elif head[0] == "ok":
                self._results[done] = (True, (body, buffers))
            else:
                self._results[done] = (False, head[2])
        self._owner.pop(key)
        ok, value = self._results.pop(key)
        if not ok:
            raise worker_error(value, wid)
        body, buffers = value
        return pickle.loads(body, buffers=buffers)

    def discard(self, keys):
        """Forget ``keys``: their batches are dropped when they arrive."""
        for key in keys:
            if self._results.pop(key, None) is not None:
                self._owner.pop(key, None)
            elif key in self._owner:
                self._dropped.add(key)

    def stop(self, why="stopped"):
        """Stop the workers (also done when the pool is garbage-collected)."""
        if self.broken is None:
            self.broken = why
        self._finalizer()
