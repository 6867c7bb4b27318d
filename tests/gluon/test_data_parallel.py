"""Data parallel over the contexts of one process: several forced CPU devices.

Each test runs ``data_parallel_worker.py`` in a subprocess with
``XLA_FLAGS=--xla_force_host_platform_device_count=4`` (this process keeps one
device); the worker compares against pure-JAX / NumPy references and against one
device, and exits non-zero on a mismatch.
"""

import os
import subprocess
import sys

import pytest

WORKER = os.path.join(os.path.dirname(__file__), "data_parallel_worker.py")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(cases, *args, timeout=120):
    env = dict(os.environ)
    # 4 CPU devices; XLA aborts a collective whose devices do not all arrive within its
    # timeouts, which a loaded 2-core machine can exceed: give them 10 minutes
    env["XLA_FLAGS"] = (
        env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
        " --xla_cpu_collective_call_terminate_timeout_seconds=600"
        " --xla_cpu_collective_timeout_seconds=600"
    ).strip()
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    try:
        proc = subprocess.run(
            [sys.executable, WORKER, cases, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"data-parallel worker {cases} ran past {timeout} s")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    for case in cases.split(","):
        assert f"ok {case}" in proc.stdout


def test_mlp_and_lenet_on_1_2_4_devices_match():
    """20 steps, eager / hybridized / compile_step: parameters match to 1e-5."""
    _run("train")


def test_stores_split_syncbatchnorm_and_checkpoints(tmp_path):
    """kvstore 'device'/'local'/None with step and allreduce_grads/update, uneven
    split_and_load, SyncBatchNorm's whole-batch statistics, and a checkpoint saved on
    4 devices loaded onto 1 and 2; gradients land on their variables' devices."""
    _run("stores,split,syncbn,gradplace,checkpoint", str(tmp_path))


def test_compile_step_reuses_split_and_load_batch_only_when_exact():
    """split_and_load's sharded batch is taken as is by compile_step only for exactly its
    pieces; reordered / replaced / in-place written / uneven pieces are assembled."""
    _run("fastbatch")


def test_compile_step_values_reach_every_context_however_used():
    """compile_step over 2 devices: each context's array takes its piece of the new
    values when first used (read, written in place or directly, set, copied)."""
    _run("lazysplit")


def test_compile_step_on_logical_contexts_updates_every_copy():
    """cpu(1) beyond jax's devices is a logical context: the compiled step runs on one
    device and every context's copy takes the new value (pure-JAX SGD reference)."""
    import numpy as np

    import gluonjax as mx
    from gluonjax import gluon, nd

    ctx = [mx.cpu(0), mx.cpu(7)]
    net = gluon.nn.Dense(3, in_units=4)
    net.initialize(ctx=ctx)
    w0, b0 = net.weight.data(ctx[0]).asnumpy(), net.bias.data(ctx[0]).asnumpy()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    step = tr.compile_step(net, gluon.loss.L2Loss())
    x = np.arange(8, dtype=np.float32).reshape(2, 4) / 8
    y = np.ones((2, 3), np.float32)
    step(gluon.utils.split_and_load(nd.array(x), ctx), nd.array(y))
    err = x @ w0.T + b0 - y  # L2Loss = 0.5 * mean over the 3 outputs of err**2, per sample
    gw, gb = err.T @ x / 3, err.sum(0) / 3
    for c in ctx:
        np.testing.assert_allclose(net.weight.data(c).asnumpy(), w0 - 0.5 * gw / 2, rtol=1e-5)
        np.testing.assert_allclose(net.bias.data(c).asnumpy(), b0 - 0.5 * gb / 2, rtol=1e-5)
