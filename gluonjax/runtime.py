"""``mx.runtime``: what this gluonjax installation can do, in MXNet's feature names.

MXNet reports compile-time switches of its C++ library. gluonjax has none; each
feature here says whether the *behaviour* it names is available now: ``CUDA``,
``CUDNN`` and ``NCCL`` when jax has a GPU backend (XLA uses cuDNN and NCCL there),
``LAPACK`` (jaxlib's CPU linear algebra), ``PROFILER`` (``mx.profiler`` on
``jax.profiler``), ``INT64_TENSOR_SIZE`` when jax's 64-bit mode is on, and the
CPU instruction sets XLA can compile for on this machine. Features tied to
MXNet's own build (MKLDNN, OpenCV, TensorRT, TVM, jemalloc, the C++ signal
handler...) are off.

Examples
--------
>>> import gluonjax as mx
>>> features = mx.runtime.Features()
>>> features.is_enabled("LAPACK")
True
>>> features.is_enabled("MKLDNN")
False
"""

from __future__ import annotations

import collections
import os

from .base import MXNetError

__all__ = ["Feature", "Features", "feature_list"]

_NAMES = (
    "CUDA CUDNN NCCL CUDA_RTC TENSORRT CPU_SSE CPU_SSE2 CPU_SSE3 CPU_SSE4_1 CPU_SSE4_2 "
    "CPU_SSE4A CPU_AVX CPU_AVX2 OPENMP SSE F16C JEMALLOC BLAS_OPEN BLAS_ATLAS BLAS_MKL "
    "BLAS_APPLE LAPACK MKLDNN OPENCV CAFFE PROFILER DIST_KVSTORE CXX14 INT64_TENSOR_SIZE "
    "SIGNAL_HANDLER DEBUG TVM_OP"
).split()

# /proc/cpuinfo flag -> feature
_CPU_FLAGS = {
    "sse": "CPU_SSE",
    "sse2": "CPU_SSE2",
    "pni": "CPU_SSE3",
    "sse4_1": "CPU_SSE4_1",
    "sse4_2": "CPU_SSE4_2",
    "sse4a": "CPU_SSE4A",
    "avx": "CPU_AVX",
    "avx2": "CPU_AVX2",
    "f16c": "F16C",
}


class Feature:
    """One feature: ``name`` and whether it is ``enabled``."""

    __slots__ = ("name", "enabled")

    def __init__(self, name, enabled):
        self.name = name
        self.enabled = bool(enabled)

    def __repr__(self):
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def _cpu_flags():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _has_gpu():
    import jax

    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


def feature_list():
    """Every feature MXNet 1.9 names, with its state in this process (see module docstring)."""
    import jax

    on = {"LAPACK", "PROFILER", "CXX14"}
    if _has_gpu():
        on |= {"CUDA", "CUDNN", "NCCL"}
    if jax.config.jax_enable_x64:
        on.add("INT64_TENSOR_SIZE")
    flags = _cpu_flags()
    on |= {feat for flag, feat in _CPU_FLAGS.items() if flag in flags}
    if "CPU_SSE" in on:
        on.add("SSE")
    if os.environ.get("GLUONJAX_DEBUG"):
        on.add("DEBUG")
    return [Feature(n, n in on) for n in _NAMES]


class Features(collections.OrderedDict):
    """Name -> :class:`Feature`, computed once per process (as MXNet's singleton)."""

    instance = None

    def __new__(cls):
        if cls.instance is None:
            inst = super().__new__(cls)
            collections.OrderedDict.__init__(inst, [(f.name, f) for f in feature_list()])
            cls.instance = inst
        return cls.instance

    def __init__(self):  # filled once in __new__
        pass

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether ``feature_name`` (case-insensitive) is enabled; RuntimeError if unknown."""
        name = feature_name.upper()
        if name not in self:
            raise MXNetError(
                f"Feature '{feature_name}' is unknown, known features are: {list(self)}"
            )
        return self[name].enabled
