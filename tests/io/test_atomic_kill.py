"""A writer process killed in the middle of a save leaves the earlier file intact."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np

import gluonjax as mx

WRITER = textwrap.dedent(
    """
    import sys, time
    from gluonjax._io.atomic import atomic_write

    def slow_chunks():
        for i in range(1000):
            if i == 3:
                print("writing", flush=True)  # the parent kills us now
            time.sleep(0.01)
            yield b"x" * 4096

    atomic_write(sys.argv[1], slow_chunks())
    """
)


def _kill_mid_write(path, script):
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "writing"
        time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def test_killed_atomic_write_keeps_old_file(tmp_path):
    target = tmp_path / "model.params"
    target.write_bytes(b"old contents")
    _kill_mid_write(target, WRITER)
    assert target.read_bytes() == b"old contents"
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "model.params"]
    assert all(name.startswith(".model.params.") for name in leftovers)  # only a temp file


def test_killed_save_parameters_keeps_loadable_file(tmp_path):
    net = mx.gluon.nn.Dense(3, in_units=2)
    net.initialize()
    path = tmp_path / "net.params"
    net.save_parameters(str(path))
    before = net.weight.data().asnumpy()
    # a second process saves a much bigger model to the same path and is killed mid-write
    script = textwrap.dedent(
        """
        import sys, time
        import gluonjax._io.atomic as atomic

        real = atomic._chunks

        def slow(data):
            for i, chunk in enumerate(real(data)):
                if i == 0:
                    print("writing", flush=True)
                    time.sleep(5)
                yield chunk

        atomic._chunks = slow
        import gluonjax as mx
        net = mx.gluon.nn.Dense(500, in_units=500)
        net.initialize()
        net.save_parameters(sys.argv[1])
        """
    )
    _kill_mid_write(path, script)
    fresh = mx.gluon.nn.Dense(3, in_units=2)
    fresh.load_parameters(str(path))  # still the complete earlier file
    np.testing.assert_array_equal(fresh.weight.data().asnumpy(), before)
