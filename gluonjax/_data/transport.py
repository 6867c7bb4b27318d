"""How a batch travels from a data-loader worker to the main process.

A batch is pickled (protocol 5) with its arrays as out-of-band buffers. On Linux
each buffer of :data:`SHM_MIN` bytes or more travels in shared memory instead of
through the socket (where it would move 64 KiB at a time, and on a busy machine each
of those round trips waits for the scheduler: benchmarks/bench_data.py's
num_workers=2 row, on one core, runs 2.4x slower through the socket alone):

* each worker owns *slots*, anonymous memory files (``memfd_create``) that it maps;
  the worker's default batching stacks the samples straight into a free slot
  (:func:`shared_empty`), and any other large buffer is copied into one;
* a slot's descriptor crosses the Unix socket once (``SCM_RIGHTS``); the main
  process maps it and hands out the batch's arrays on that memory, page-aligned,
  so jax on the CPU uses them in place;
* when the last array on a slot is garbage-collected in the main process, the slot
  goes back to its worker with the next task message, and is reused: fresh shared
  memory costs page faults on every use, a mapped slot does not.

Nothing has a name, so nothing is left behind in ``/dev/shm`` when a process dies.
Smaller buffers, and all of them where ``memfd_create`` is missing, go through the
socket. Standard library and numpy only: the jax-free workers import this module.
"""

from __future__ import annotations

import collections
import mmap
import os
import pickle
import socket
import weakref

import numpy as np

from .batch import aligned_empty

SHM_MIN = 1 << 16
MAX_IDLE_SLOTS = 4
_HAVE_MEMFD = hasattr(os, "memfd_create") and hasattr(socket, "send_fds")
_WORKER = []  # the worker process's Channel (set by gluonjax._data.worker)


def _address(buf):
    return np.frombuffer(buf, np.uint8).ctypes.data if len(buf) else 0


def shared_empty(shape, dtype):
    """An uninitialised array for a batch: in a free slot of this worker's shared
    memory when it is large (sent without a copy), a numpy array otherwise."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if not _WORKER or not _HAVE_MEMFD or nbytes < SHM_MIN:
        return np.empty(shape, dtype)
    return _WORKER[0].slot_array(nbytes)[:nbytes].view(dtype).reshape(shape)


class _Slot:
    __slots__ = ("id", "size", "fd", "mem", "array")

    def __init__(self, sid, size):
        self.id = sid
        self.size = size
        self.fd = os.memfd_create(f"gluonjax-batch-{sid}", os.MFD_CLOEXEC)
        try:
            os.ftruncate(self.fd, size)
            self.mem = mmap.mmap(self.fd, size)
        except OSError:
            os.close(self.fd)
            raise
        self.array = np.frombuffer(self.mem, np.uint8)


class Channel:
    """One end of the socket between the main process and a worker (``conn``: a
    ``multiprocessing.connection.Connection`` over a Unix socket pair)."""

    def __init__(self, conn):
        self.conn = conn
        self._sock = None
        # worker side
        self._slots = {}  # id -> _Slot
        self._next_id = 0
        self._idle = []  # ids of slots the main process gave back
        self._taken = {}  # address -> slot id, slots handed out by slot_array for this task
        self._closed = []  # ids of closed slots the main process still maps
        # main side
        self._maps = {}  # slot id -> the slot's mmap
        self._freed = collections.deque()  # slot ids whose arrays were collected

    def _socket(self):
        if self._sock is None:  # a second handle on the same socket, for descriptors
            self._sock = socket.socket(fileno=os.dup(self.conn.fileno()))
        return self._sock

    # ------------------------------------------------------------ worker side
    def slot_array(self, nbytes):
        """The memory of a free slot of at least ``nbytes`` (a new slot if none fits)."""
        fits = [i for i in self._idle if self._slots[i].size >= nbytes]
        if fits:
            sid = min(fits, key=lambda i: self._slots[i].size)
            self._idle.remove(sid)
        else:
            sid = self._next_id
            self._next_id += 1
            size = -(-nbytes // mmap.PAGESIZE) * mmap.PAGESIZE
            self._slots[sid] = _Slot(sid, size)
        slot = self._slots[sid]
        self._taken[slot.array.ctypes.data] = sid
        return slot.array

    def give_back(self, ids):
        """The main process is done with slots ``ids``; keep a few for reuse, close the
        others (the main process drops its mappings when the next message says so)."""
        self._idle.extend(i for i in ids if i in self._slots)
        while len(self._idle) > MAX_IDLE_SLOTS:
            slot = self._slots.pop(self._idle.pop(0))
            self._closed.append(slot.id)
            if slot.fd is not None:
                os.close(slot.fd)
            slot.array = None
            try:
                slot.mem.close()
            except BufferError:  # an array on it is still alive: unmapped when it dies
                pass

    def _to_slot(self, view):
        sid = self._taken.pop(_address(view), None)
        if sid is None:  # not made by shared_empty: copy it into a slot
            self.slot_array(view.nbytes)
            sid = self._taken.popitem()[1]
            self._slots[sid].array[: view.nbytes] = np.frombuffer(view, np.uint8)
        return self._slots[sid]

    def send(self, head, body=b"", buffers=()):
        """Send ``head`` (picklable), a pickle ``body`` and its out-of-band ``buffers``."""
        views = [b.raw() for b in buffers]
        kinds, new_fds = [], []
        try:
            for v in views:
                if _HAVE_MEMFD and v.nbytes >= SHM_MIN:
                    slot = self._to_slot(v)
                    kinds.append(("slot", slot.id, v.nbytes, slot.size, slot.fd is not None))
                    if slot.fd is not None:
                        new_fds.append(slot)
                else:
                    kinds.append(("inline", v.nbytes))
            self.conn.send_bytes(pickle.dumps((head, kinds, self._closed)))
            self._closed = []
            self.conn.send_bytes(body)
            for v, kind in zip(views, kinds):
                if kind[0] == "inline":
                    self.conn.send_bytes(v)
            if new_fds:
                socket.send_fds(self._socket(), [b"F"], [s.fd for s in new_fds])
                for slot in new_fds:  # the main process has its own descriptor now
                    os.close(slot.fd)
                    slot.fd = None
        finally:
            self._idle.extend(self._taken.values())  # made but not sent
            self._taken.clear()

    # ------------------------------------------------------------ main side
    def recv(self):
        """``(head, body, buffers)`` of the next message; buffers are aligned numpy
        uint8 arrays that nobody else writes to while they live (jax can use them in
        place). A slot returns to the worker when its buffer's arrays are collected."""
        head, kinds, closed = pickle.loads(self.conn.recv_bytes())
        for sid in closed:  # the worker closed these: unmapped once no array uses them
            self._maps.pop(sid, None)
        body = self.conn.recv_bytes()
        buffers = []
        for kind in kinds:
            if kind[0] == "inline":
                buf = aligned_empty((kind[1],), np.uint8)
                self.conn.recv_bytes_into(buf)
                buffers.append(buf)
        new = [k for k in kinds if k[0] == "slot" and k[4]]
        if new:
            _, fds, _, _ = socket.recv_fds(self._socket(), 1, len(new))
            try:
                if len(fds) != len(new):
                    raise OSError(f"expected {len(new)} shared-memory descriptors, got {len(fds)}")
                for (_, sid, _, size, _), fd in zip(new, fds):
                    self._maps[sid] = mmap.mmap(fd, size)
            finally:
                for fd in fds:
                    os.close(fd)
        inline = iter(buffers)
        out = []
        for kind in kinds:
            if kind[0] == "inline":
                out.append(next(inline))
            else:
                _, sid, nbytes, _, _ = kind
                # A new array straight on the mapping: numpy makes it the base of every
                # array unpickled from it (it is the first non-owning array over the
                # mmap), and jax on the CPU keeps that base alive while it uses the
                # memory. So its death means the batch is gone: the slot can be reused.
                owner = np.frombuffer(self._maps[sid], np.uint8, count=nbytes)
                weakref.finalize(owner, self._freed.append, sid)
                out.append(owner)
        return head, body, out

    def take_freed(self):
        """Slot ids to give back to the worker (sent with the next task)."""
        ids = []
        while self._freed:
            ids.append(self._freed.popleft())
        return ids

    def close(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None
