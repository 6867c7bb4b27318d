"""Device contexts: ``mx.cpu()``, ``mx.gpu(i)``, ``current_context()``.

A :class:`Context` names a jax device. ``with mx.gpu(0):`` makes it the default
for array creation. Asking for a GPU that is not there raises
:class:`~gluonjax.base.ContextError` with the devices that are.

``cpu(i)`` is jax's CPU device ``i`` when jax has that many
(``XLA_FLAGS=--xla_force_host_platform_device_count=N``); otherwise it is a
*logical* context on CPU device 0, as MXNet's tests and multi-context scripts
use ``cpu(1)``: arrays placed on it remember it (``x.context``), operations on
them keep it, parameters keep one copy per context and a Trainer sums their
gradients, and every value is the one device 0 computes.
"""

from __future__ import annotations

import threading
import warnings

import jax

from .base import ContextError, _ClassPropertyMeta, classproperty

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus"]

_state = threading.local()  # .ctx: this thread's default context (``with ctx:``)


class Context(metaclass=_ClassPropertyMeta):
    """A device: ``Context('cpu', 0)`` or ``Context('gpu', 1)``.

    Parameters
    ----------
    device_type : str
        ``'cpu'``, ``'gpu'`` or ``'cpu_pinned'`` (treated as ``'cpu'``).
    device_id : int
        Index among the devices of that type.

    Examples
    --------
    >>> import gluonjax as mx
    >>> mx.cpu()
    cpu(0)
    >>> with mx.cpu(0):
    ...     mx.current_context()
    cpu(0)
    """

    __slots__ = ("device_type", "device_id", "_old")
    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    devstr2type = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}

    @classproperty
    def default_ctx(cls):
        """This thread's default context (deprecated in MXNet 1.x: use
        ``current_context()``); assigning it sets this thread's default."""
        warnings.warn(
            "Context.default_ctx has been deprecated. Please use Context.current_context() "
            "instead. Please use test_utils.set_default_context to set a default context",
            DeprecationWarning,
            stacklevel=2,
        )
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, value):
        warnings.warn(
            "Context.default_ctx has been deprecated. Please use Context.current_context() "
            "instead. Please use test_utils.set_default_context to set a default context",
            DeprecationWarning,
            stacklevel=2,
        )
        _state.ctx = Context(value)

    @property
    def device_typeid(self):
        """MXNet's number for the device type (``Context.devtype2str`` maps it back)."""
        return Context.devstr2type[self.device_type]

    def __init__(self, device_type="cpu", device_id=0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        if device_type not in ("cpu", "gpu", "cpu_pinned", "cpu_shared"):
            raise ContextError(f"unknown device type {device_type!r}; use 'cpu' or 'gpu'")
        self.device_type = device_type
        self.device_id = int(device_id)
        self._old = None

    @property
    def jax_device(self):
        """The ``jax.Device`` this context names (raises if a GPU is absent; a CPU
        context beyond jax's CPU devices is a logical context on CPU device 0)."""
        kind = "gpu" if self.device_type == "gpu" else "cpu"
        devices = _devices(kind)
        if kind == "cpu" and self.device_id >= len(devices) and devices:
            return devices[0]
        if self.device_id >= len(devices):
            if kind == "cpu" and devices:
                # a logical CPU context: cpu(i) beyond jax's CPU devices is device 0
                return devices[0]
            have = ", ".join(str(d) for d in jax.devices()) or "none"
            raise ContextError(
                f"{self} is not available: this machine has {len(devices)} {kind} "
                f"device(s) (jax sees: {have}). Use mx.cpu() or check "
                f"mx.context.num_gpus() before asking for a GPU."
            )
        return devices[self.device_id]

    @property
    def is_logical(self):
        """True for ``cpu(i)`` beyond jax's CPU devices (a context on CPU device 0)."""
        return self.device_type != "gpu" and self.device_id >= len(_devices("cpu"))

    def __enter__(self):
        _ = self.jax_device  # fail early on a missing device
        self._old = current_context()
        _state.ctx = self
        return self

    def __exit__(self, *exc):
        _state.ctx = self._old

    def __eq__(self, other):
        return (
            isinstance(other, Context)
            and _kind(self) == _kind(other)
            and self.device_id == other.device_id
        )

    def __hash__(self):
        return hash((_kind(self), self.device_id))

    def __repr__(self):
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__


def _kind(ctx):
    return "gpu" if ctx.device_type == "gpu" else "cpu"


_DEVICES: dict = {}
_INDEX: dict = {}  # jax device -> its index among this process's devices of its kind


def _devices(kind):
    got = _DEVICES.get(kind)
    if got is None:
        try:
            got = tuple(jax.local_devices(backend=kind))  # this process's (multi-process jobs)
        except RuntimeError:
            got = ()
        _DEVICES[kind] = got
    return got


def cpu(device_id=0):
    """The CPU context (``cpu(0)``)."""
    return Context("cpu", device_id)


def cpu_pinned(device_id=0):
    """Pinned host memory in MXNet; plain CPU memory here."""
    return Context("cpu_pinned", device_id)


def gpu(device_id=0):
    """The ``device_id``-th GPU context; using it without a GPU raises ContextError."""
    return Context("gpu", device_id)


def num_gpus():
    """How many GPUs jax can see."""
    try:
        return len(jax.devices("gpu"))
    except RuntimeError:
        return 0


def current_context():
    """The context set by the innermost ``with ctx:`` (``cpu(0)`` by default)."""
    ctx = getattr(_state, "ctx", None)
    return ctx if ctx is not None else Context("cpu", 0)


def context_of(device):
    """The Context of a jax device."""
    kind = "gpu" if device.platform in ("gpu", "cuda", "rocm") else "cpu"
    index = _INDEX.get(device)
    if index is None:  # its position among this process's devices (ids are global)
        local = _devices(kind)
        index = local.index(device) if device in local else device.id
        _INDEX[device] = index
    return Context(kind, index)
