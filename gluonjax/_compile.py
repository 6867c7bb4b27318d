"""XLA compilation: jax's persistent cache on by default, and a notice for long compiles.

* **Persistent cache.** A second run of a script starts fast: gluonjax turns on
  jax's persistent compilation cache in ``$GLUONJAX_CACHE_DIR`` (default
  ``$MXNET_HOME/jax_cache``, ``MXNET_HOME`` defaulting to ``~/.mxnet`` as in
  MXNet; at most 2 GiB, least recently used entries go first).
  ``GLUONJAX_CACHE_DIR=0`` (or ``off``) leaves jax's setting alone, and a cache
  directory the user gave jax is never replaced.
* **Notice.** When one compile takes longer than ``$GLUONJAX_COMPILE_NOTICE``
  seconds (default 3; ``0`` turns it off), one line on stderr says that the wait
  is XLA compiling, and that later calls and runs reuse the result.
* **Compiler options per program.** gluonjax's own programs compile with XLA options
  chosen per role (:func:`jit`, :func:`options_for`), passed as
  ``jax.jit(..., compiler_options=...)``: a user's own jax code in the same process keeps
  jax's defaults, and nothing goes through the process-wide ``XLA_FLAGS``. On XLA:CPU a
  hybridized forward outside ``autograd.record()`` whose program has (ungrouped)
  convolutions sends them to XLA's own emitter instead of YNNPACK fusions
  (``xla_cpu_experimental_ynn_fusion_type=""``, role ``'infer'``): ResNet-50 inference
  at batch 1 on one core 121 -> 94 ms. Every other program (the recorded forward and
  its VJP, the fused step, the update, the executor) uses role ``'train'``: jax's
  defaults, where YNNPACK won or tied (docs/performance.md has the table). An option
  this jaxlib does not know is found by one trivial compile and dropped (an unknown
  option is an error there, never an abort). ``$GLUONJAX_XLA_OPTIONS``: ``off`` (jax's
  defaults everywhere) or a JSON object ``{"infer": {...}, "train": {...}}`` replacing
  the choice.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

from ._caches import PROCESS

__all__ = ["cache_dir", "setup", "jit", "xla_options"]

_OFF = ("", "0", "off", "false", "no", "none")
_START = "/jax/compilation_cache/compile_requests_use_cache"
_DONE = (
    "/jax/core/compile/backend_compile_duration",
    "/jax/compilation_cache/cache_retrieval_time_sec",
)
_local = threading.local()


def cache_dir():
    """The persistent cache directory gluonjax uses, or None when it is off."""
    d = os.environ.get("GLUONJAX_CACHE_DIR")
    if d is not None:
        return None if d.strip().lower() in _OFF else os.path.expanduser(d)
    home = os.environ.get("MXNET_HOME") or os.path.join("~", ".mxnet")
    return os.path.join(os.path.expanduser(home), "jax_cache")


def _notice_after():
    value = os.environ.get("GLUONJAX_COMPILE_NOTICE", "3").strip().lower()
    if value in _OFF:
        return None
    try:
        return float(value)
    except ValueError:
        return 3.0


def _say(seconds, finished):
    where = "" if not PROCESS.compile_cache else f"; cached in {PROCESS.compile_cache}"
    what = f"took {seconds:.1f} s" if finished else f"is taking over {seconds:.0f} s"
    sys.stderr.write(
        f"gluonjax: an XLA compile {what} (the first call with new input shapes compiles; "
        f"later calls reuse it{where})\n"
    )
    sys.stderr.flush()


def _on_event(event, **_):
    if event != _START:
        return
    after = _notice_after()
    if after is None:
        return
    timer = threading.Timer(after, lambda: (_say(after, False), setattr(timer, "said", True)))
    timer.daemon, timer.said = True, False
    _local.timer = timer
    timer.start()


def _on_duration(event, duration, **_):
    if event not in _DONE:
        return
    timer = getattr(_local, "timer", None)
    _local.timer = None
    if timer is not None:
        timer.cancel()
        return
    after = _notice_after()  # no start event (cache off): say it once it is over
    if after is not None and event == _DONE[0] and duration > after:
        _say(duration, True)


CACHE_LIMIT = 2 << 30  # bytes of the persistent cache kept by trim_cache


def _dir_mtime(d):
    try:
        return os.stat(d).st_mtime_ns
    except OSError:
        return None


def _watch_cache(d):
    """At exit, trim the cache directory if this process added to it (its mtime moved)."""
    seen = _dir_mtime(d)
    atexit.register(lambda: _dir_mtime(d) != seen and trim_cache(d))


def trim_cache(d, limit=None):
    """Delete the least recently used entries of jax's cache directory ``d`` (by access or
    write time, whichever is later) until it holds at most 90% of ``limit`` bytes
    (:data:`CACHE_LIMIT`) when it holds more. One directory scan; entries another process
    removes meanwhile are skipped. Returns the number of entries deleted."""
    limit = CACHE_LIMIT if limit is None else limit
    entries, total = [], 0
    try:
        with os.scandir(d) as it:
            for e in it:
                if not e.name.endswith("-cache"):
                    continue
                try:
                    st = e.stat()
                except OSError:
                    continue
                total += st.st_size
                entries.append((max(st.st_atime_ns, st.st_mtime_ns), e.path, st.st_size))
    except OSError:
        return 0
    if total <= limit:
        return 0
    entries.sort()
    gone = 0
    for _, path, size in entries:
        if total <= limit * 0.9:
            break
        for victim in (path, path[: -len("-cache")] + "-atime"):  # jax's LRU wrote these
            try:
                os.remove(victim)
            except OSError:
                pass
        total -= size
        gone += 1
    return gone


def setup():
    """Turn on the persistent cache (unless configured otherwise) and the notice; once."""
    if PROCESS.compile_setup:
        return
    PROCESS.compile_setup = True
    import jax
    from jax._src import monitoring

    # MXNet computes in float64/int64 when asked: jax's 64-bit types are on for the process.
    # gluonjax's own defaults stay 32-bit (every array it creates has an explicit dtype).
    jax.config.update("jax_enable_x64", True)
    d = cache_dir()
    if d is not None and not jax.config.jax_compilation_cache_dir:
        try:
            os.makedirs(d, exist_ok=True)
        except OSError:
            d = None  # a read-only home: run without the cache
        if d is not None:
            jax.config.update("jax_compilation_cache_dir", d)
            # small programs too: one model's layers add up to seconds
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.05)
            # No size limit in jax: its LRU scans the whole directory on every write (0.4 s
            # with 2200 entries, more than most compiles); the process trims it once at exit
            if jax.config.jax_compilation_cache_max_size in (None, -1):
                _watch_cache(d)
            PROCESS.compile_cache = d
    monitoring.register_event_listener(_on_event)
    monitoring.register_event_duration_secs_listener(_on_duration)


# ----------------------------------------------------------------------------- options
# gluonjax's choice per role of program, on the CPU backend (measured: docs/performance.md)
_CPU_OPTIONS = {"infer": {"xla_cpu_experimental_ynn_fusion_type": ""}, "train": {}}
_chosen: dict = {}  # role -> options dict (or None), decided once per process


def _configured():
    raw = os.environ.get("GLUONJAX_XLA_OPTIONS")
    if raw is None or not raw.strip():
        return _CPU_OPTIONS, True
    if raw.strip().lower() in _OFF:
        return {}, False
    import json

    from .base import MXNetError

    try:
        got = json.loads(raw)
        if not isinstance(got, dict) or not all(isinstance(v, dict) for v in got.values()):
            raise ValueError("not an object of objects")
    except ValueError as err:
        raise MXNetError(
            f"GLUONJAX_XLA_OPTIONS={raw!r} is neither 'off' nor a JSON object like "
            f'{{"infer": {{"xla_cpu_experimental_ynn_fusion_type": ""}}, "train": {{}}}} '
            f"({err}); fix or unset it"
        ) from None
    return got, False


def _supported(opts):
    """The options of ``opts`` this jaxlib accepts (each probed once by a trivial compile)."""
    import jax
    import numpy as np

    kept = {}
    for k, v in opts.items():
        ok = _PROBED.get((k, v))
        if ok is None:
            try:
                jax.jit(lambda x: x + 1, compiler_options={k: v}).lower(np.float32(0)).compile()
                ok = True
            except Exception:  # "No such compile option" (another jaxlib): skip it
                ok = False
            _PROBED[(k, v)] = ok
        if ok:
            kept[k] = v
    return kept


_PROBED: dict = {}


def xla_options(role):
    """The XLA compiler options gluonjax's programs of ``role`` compile with, or None.

    Parameters
    ----------
    role : {'infer', 'train'}
        ``'infer'``: a forward outside autograd (hybridized prediction);
        ``'train'``: programs with gradients or updates (recorded forwards, the fused
        step, the update).
    """
    if role in _chosen:
        return _chosen[role]
    import jax

    table, cpu_only = _configured()
    opts = dict(table.get(role) or {})
    if cpu_only and jax.default_backend() != "cpu":
        opts = {}
    opts = _supported(opts) if opts else opts
    _chosen[role] = opts or None
    return _chosen[role]


def weight_twins():
    """Whether hybridized inference passes 4-D weights in HWIO (``gluon/_fast.py``):
    on the CPU backend, unless ``GLUONJAX_WEIGHT_TWINS=0``."""
    got = _chosen.get("twins")
    if got is None:
        import jax

        off = os.environ.get("GLUONJAX_WEIGHT_TWINS", "1").strip().lower() in _OFF
        got = _chosen["twins"] = not off and jax.default_backend() == "cpu"
    return got


def _convs(jaxpr, found=None):
    """``{"plain": bool, "grouped": bool}``: the convolutions in ``jaxpr`` and the
    programs it calls (grouped: ``feature_group_count`` or ``batch_group_count`` > 1)."""
    from jax.extend.core import jaxprs_in_params

    found = {"plain": False, "grouped": False} if found is None else found
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "conv_general_dilated":
            p = eqn.params
            grouped = p["feature_group_count"] > 1 or p["batch_group_count"] > 1
            found["grouped" if grouped else "plain"] = True
        for sub in jaxprs_in_params(eqn.params):  # jit calls, scan bodies, ...
            _convs(sub, found)
    return found


def options_for(role, jaxpr):
    """The options of ``role`` for the program ``jaxpr``. The YNNPACK switch is for
    convolutions: a program without any keeps jax's default (its matrix products and
    reductions then round as in the training programs), and so does one with grouped
    (e.g. depthwise) convolutions, which run slower on XLA's own emitter."""
    opts = xla_options(role)
    key = "xla_cpu_experimental_ynn_fusion_type"
    if opts and key in opts:
        found = _convs(jaxpr)
        if found["grouped"] or not found["plain"]:
            opts = {k: v for k, v in opts.items() if k != key}
    return opts or None


def jit(fun, role, **kwargs):
    """``jax.jit(fun, **kwargs)`` with gluonjax's compiler options for ``role``."""
    import jax

    opts = xla_options(role)
    if opts:
        kwargs["compiler_options"] = opts
    return jax.jit(fun, **kwargs)
