"""pytest plugin of the GPU run's correctness pass (``-p benchmarks._gpu_ctx``).

With ``GLUONJAX_BENCH_CTX=gpu`` (or ``cpu``) in the environment, that context becomes
gluonjax's default for the whole session: gluonjax, like MXNet, creates arrays on
``cpu(0)`` unless told otherwise, so without this the tests would check the CPU on a GPU
machine. The header of the pytest run names the context the tests ran on.
"""

from __future__ import annotations

import os

ENV = "GLUONJAX_BENCH_CTX"


def pytest_configure(config):
    kind = os.environ.get(ENV)
    if kind:
        import gluonjax as mx

        mx.Context(kind, 0).__enter__()  # the session's default (this thread's)


def pytest_report_header(config):
    import gluonjax as mx

    return f"gluonjax default context: {mx.current_context()}"
