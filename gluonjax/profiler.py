"""``mx.profiler``: MXNet's profiler API on ``jax.profiler``.

``set_state('run')`` starts a jax trace (XLA compilation and execution on every
device, Python scopes, the annotations below); ``set_state('stop')`` ends it.
The trace directory (``set_config(trace_dir=...)``, default: a ``profile_trace``
folder next to ``filename``) opens in TensorBoard's profiler or Perfetto
(``ui.perfetto.dev``); ``dump()`` also writes ``filename`` (default
``profile.json``) in Chrome's trace-event format, which ``chrome://tracing`` and
Perfetto read, as MXNet's does. ``dumps()`` returns a table (or JSON) of the
recorded events aggregated by name: count, total, min, max and mean time.

``Domain``/``Task``/``Frame``/``Event``/``Marker`` become named ranges or instants
in the trace, ``Counter`` values are recorded as instants ``name=value``.
``scope(name)`` names a range. jax cannot pause a trace: ``pause()``/``resume()``
only stop and restart the annotations made here.

Examples
--------
>>> import os, tempfile
>>> import gluonjax as mx
>>> out = os.path.join(tempfile.mkdtemp(), "profile.json")
>>> mx.profiler.set_config(filename=out, profile_all=True)
>>> mx.profiler.set_state("run")
>>> with mx.profiler.scope("step"):
...     _ = (mx.nd.ones((4, 4)) * 2).asnumpy()
>>> mx.profiler.set_state("stop")
>>> mx.profiler.dump()
>>> os.path.getsize(out) > 0
True
>>> "step" in mx.profiler.dumps()
True
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import json
import os
import threading

from ._io.atomic import atomic_write
from .base import MXNetError

__all__ = [
    "set_config",
    "set_state",
    "state",
    "dump",
    "dumps",
    "pause",
    "resume",
    "scope",
    "Domain",
    "Task",
    "Frame",
    "Event",
    "Counter",
    "Marker",
    "profiler_set_config",
    "profiler_set_state",
    "dump_profile",
    "set_kvstore_handle",
]

_KNOWN = {
    "filename",
    "profile_all",
    "profile_symbolic",
    "profile_imperative",
    "profile_memory",
    "profile_api",
    "continuous_dump",
    "dump_period",
    "aggregate_stats",
    "profile_process",
    "trace_dir",
}
_lock = threading.Lock()
_cfg = {"filename": "profile.json"}
_st = {"running": False, "paused": False, "trace_dir": None, "last": None, "counters": {}}


class ProfilerError(MXNetError, ValueError):
    """A profiler call with an invalid argument or in the wrong state."""


def set_config(**kwargs):
    """Configure the profiler (keyword arguments only, as MXNet).

    Parameters
    ----------
    filename : str
        Where ``dump()`` writes the Chrome-format trace (default ``profile.json``).
    trace_dir : str
        Folder for jax's trace (TensorBoard / Perfetto); default: ``<filename>_trace``.
    profile_all, profile_symbolic, profile_imperative, profile_memory, profile_api,
    continuous_dump, dump_period, aggregate_stats, profile_process
        MXNet's switches: accepted; jax traces everything it can in one mode.
    """
    unknown = set(kwargs) - _KNOWN
    if unknown:
        raise ProfilerError(
            f"profiler.set_config: unknown option(s) {sorted(unknown)}; known: {sorted(_KNOWN)}"
        )
    _cfg.update(kwargs)


def profiler_set_config(mode="symbolic", filename="profile.json"):
    """Deprecated MXNet form of :func:`set_config`."""
    set_config(filename=filename, profile_all=mode == "all")


def _trace_dir():
    d = _cfg.get("trace_dir")
    if d:
        return os.fspath(d)
    base = os.path.splitext(os.fspath(_cfg.get("filename", "profile.json")))[0]
    return base + "_trace"


def set_state(state="stop", profile_process="worker"):
    """``'run'`` starts tracing, ``'stop'`` ends it (``profile_process`` is accepted)."""
    import jax

    if state not in ("run", "stop"):
        raise ProfilerError(f"profiler.set_state: state must be 'run' or 'stop', got {state!r}")
    with _lock:
        if state == "run" and not _st["running"]:
            d = _trace_dir()
            os.makedirs(d, exist_ok=True)
            jax.profiler.start_trace(d, create_perfetto_trace=True)
            _st.update(running=True, paused=False, trace_dir=d)
        elif state == "stop" and _st["running"]:
            jax.profiler.stop_trace()
            _st.update(running=False, last=_latest_run(_st["trace_dir"]))


def profiler_set_state(state="stop"):
    """Deprecated MXNet form of :func:`set_state`."""
    set_state(state)


def state():
    """``'run'`` while tracing, else ``'stop'``."""
    return "run" if _st["running"] else "stop"


def _latest_run(trace_dir):
    runs = sorted(glob.glob(os.path.join(trace_dir, "plugins", "profile", "*")))
    return runs[-1] if runs else None


def dump(finished=True, profile_process="worker"):
    """Write the last trace to ``filename`` in Chrome's trace-event JSON format.

    A running trace is stopped first when ``finished`` (the default).
    """
    if _st["running"]:
        if not finished:
            raise ProfilerError(
                "profiler.dump(finished=False): jax writes a trace only when "
                "it stops; call dump() or set_state('stop') first"
            )
        set_state("stop")
    run = _st["last"]
    files = sorted(glob.glob(os.path.join(run, "*.trace.json.gz"))) if run else []
    files = files or (sorted(glob.glob(os.path.join(run, "perfetto_trace.json.gz"))) if run else [])
    if not files:
        raise ProfilerError(
            "profiler.dump: no trace recorded; call set_state('run') and "
            "set_state('stop') around the code to profile"
        )
    with gzip.open(files[0], "rb") as f:
        data = f.read()
    atomic_write(_cfg.get("filename", "profile.json"), data)


def dump_profile():
    """Deprecated MXNet form of :func:`dump`."""
    dump(True)


def _events():
    """(name, duration in ms) of every event of the last trace."""
    from jax.profiler import ProfileData

    run = _st["last"]
    files = glob.glob(os.path.join(run, "*.xplane.pb")) if run else []
    out = []
    for path in files:
        data = ProfileData.from_file(path)
        for plane in data.planes:
            for line in plane.lines:
                for e in line.events:
                    name = e.name
                    if name.startswith("$") or name.startswith("ThreadpoolListener"):
                        continue
                    out.append((name, e.duration_ns / 1e6))
    return out


def dumps(reset=False, format="table", sort_by="total", ascending=False):  # noqa: A002
    """Aggregate statistics of the last trace, by event name (times in milliseconds).

    Parameters
    ----------
    reset : bool
        Forget the recorded trace afterwards.
    format : {'table', 'json'}
    sort_by : {'total', 'avg', 'min', 'max', 'count'}
    ascending : bool
    """
    if format not in ("table", "json"):
        raise ProfilerError(f"profiler.dumps: format must be 'table' or 'json', got {format!r}")
    keys = ("total", "avg", "min", "max", "count")
    if sort_by not in keys:
        raise ProfilerError(f"profiler.dumps: sort_by must be one of {keys}, got {sort_by!r}")
    stats = {}
    for name, ms in _events():
        s = stats.setdefault(name, {"count": 0, "total": 0.0, "min": float("inf"), "max": 0.0})
        s["count"] += 1
        s["total"] += ms
        s["min"] = min(s["min"], ms)
        s["max"] = max(s["max"], ms)
    for s in stats.values():
        s["avg"] = s["total"] / s["count"]
    for name, value in _st["counters"].items():
        stats.setdefault(
            f"counter:{name}",
            {
                "count": 1,
                "total": float(value),
                "min": float(value),
                "max": float(value),
                "avg": float(value),
            },
        )
    rows = sorted(stats.items(), key=lambda kv: kv[1][sort_by], reverse=not ascending)
    if reset:
        _st["last"] = None
    if format == "json":
        return json.dumps({"Time": {k: v for k, v in rows}, "Unit": {"Time": "ms"}})
    lines = [
        "Profile Statistics (jax trace; times in ms)",
        f"{'Name':<60}{'Count':>10}{'Total':>14}{'Min':>12}{'Max':>12}{'Avg':>12}",
    ]
    for name, s in rows:
        lines.append(
            f"{name[:59]:<60}{s['count']:>10}{s['total']:>14.4f}{s['min']:>12.4f}"
            f"{s['max']:>12.4f}{s['avg']:>12.4f}"
        )
    return "\n".join(lines)


def pause(profile_process="worker"):
    """Stop making the annotations of this module (the jax trace itself keeps running)."""
    _st["paused"] = True


def resume(profile_process="worker"):
    """Make annotations again after :func:`pause`."""
    _st["paused"] = False


def set_kvstore_handle(handle):
    """MXNet's distributed kvstore hook: accepted, no effect."""


def _annotation(name):
    import jax

    return jax.profiler.TraceAnnotation(name)


@contextlib.contextmanager
def scope(name="<unk>:", append_mode=False):
    """A named range in the trace around a ``with`` block."""
    if not isinstance(name, str) or not name:
        raise ProfilerError("profiler.scope needs a non-empty name")
    if _st["paused"]:
        yield
        return
    with _annotation(name.rstrip(":")):
        yield


class Domain:
    """A namespace for tasks, frames, counters and markers.

    Parameters
    ----------
    name : str
    """

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    def new_task(self, name):
        """A :class:`Task` in this domain."""
        return Task(self, name)

    def new_frame(self, name):
        """A :class:`Frame` in this domain."""
        return Frame(self, name)

    def new_counter(self, name, value=None):
        """A :class:`Counter` in this domain."""
        return Counter(self, name, value)

    def new_marker(self, name):
        """A :class:`Marker` in this domain."""
        return Marker(self, name)


class _Range:
    """A named range: ``start()`` ... ``stop()`` (also a ``with`` block)."""

    def __init__(self, domain, name):
        self.domain = domain
        self.name = name
        self._ann = None

    def _label(self):
        return f"{self.domain}::{self.name}" if self.domain is not None else self.name

    def start(self):
        if self._ann is None and not _st["paused"]:
            self._ann = _annotation(self._label())
            self._ann.__enter__()

    def stop(self):
        if self._ann is not None:
            ann, self._ann = self._ann, None
            ann.__exit__(None, None, None)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def __str__(self):
        return self.name


class Task(_Range):
    """A named task (a range) in a :class:`Domain`."""


class Frame(_Range):
    """A named frame (a range, e.g. one training iteration) in a :class:`Domain`."""


class Event(_Range):
    """A named range outside any domain."""

    def __init__(self, name):
        super().__init__(None, name)


class Counter:
    """A named value; each change is recorded in the trace as an instant ``name=value``."""

    def __init__(self, domain, name, value=None):
        self.domain = domain
        self.name = name
        self.value = None
        if value is not None:
            self.set_value(value)

    def set_value(self, value):
        """Set the counter."""
        self.value = value
        _st["counters"][f"{self.domain}::{self.name}"] = value
        if _st["running"] and not _st["paused"]:
            with _annotation(f"{self.domain}::{self.name}={value}"):
                pass

    def increment(self, delta=1):
        """Add ``delta``."""
        self.set_value((self.value or 0) + delta)

    def decrement(self, delta=1):
        """Subtract ``delta``."""
        self.set_value((self.value or 0) - delta)

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return self.name


class Marker:
    """A named instant in a :class:`Domain`."""

    def __init__(self, domain, name):
        self.domain = domain
        self.name = name

    def mark(self, scope="process"):
        """Record the instant (``scope``: MXNet's 'global', 'process', 'thread'...)."""
        if not _st["paused"]:
            with _annotation(f"{self.domain}::{self.name}[{scope}]"):
                pass
