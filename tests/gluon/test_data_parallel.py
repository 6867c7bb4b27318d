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
    env["XLA_FLAGS"] = (
        env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
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
    4 devices loaded onto 1 and 2."""
    _run("stores,split,syncbn,checkpoint", str(tmp_path))
