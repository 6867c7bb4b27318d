"""MXNet 1.9.1's own distributed store tests (``tests/nightly/dist_*``) on gluonjax.

Run with gluonjax's interpreter::

    python tools/check_mxnet_dist_nightly.py --mirror GITDIR --support DIR
    python tools/check_mxnet_dist_nightly.py --mirror GITDIR --support DIR --full

``GITDIR`` is a git mirror of apache/mxnet (the files are read at tag 1.9.1); ``DIR``
holds the ``nose`` stand-in the MXNet suite runner uses (``mxnet_suite/support``).
Each script runs under ``python -m gluonjax.launch -n 2`` with ``mxnet`` aliased to
gluonjax (``python -m gluonjax.run``), as MXNet ran them under ``tools/launch.py``;
one row per run: the script and its ``--type``, the launcher's exit code, the seconds.
Without ``--full`` the 1200x1200 arrays become 120x120 (the checks loop over rows in
Python, which takes minutes on 2 CPU cores); the GPU script runs on 2 forced CPU
devices per worker. ``dist_async_kvstore.py`` must fail with ``AsyncKVStoreError``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = {
    "tests/nightly/dist_sync_kvstore.py": "dist_sync_kvstore.py",
    "tests/nightly/dist_device_sync_kvstore.py": "dist_device_sync_kvstore.py",
    "tests/nightly/dist_async_kvstore.py": "dist_async_kvstore.py",
    "tests/nightly/test_kvstore.py": "test_kvstore.py",
    "tests/python/unittest/common.py": "common.py",
    "tests/python/common/models.py": "models.py",
}
SYNC_TYPES = [
    "gluon_type_cpu",
    "gluon_step_cpu",
    "gluon_sparse_step_cpu",
    "invalid_cpu",
    "init_gpu --no-gpu",
    "default_cpu --nrepeat 2",
    "compressed_cpu --nrepeat 2",
]


def extract(mirror, folder, full):
    for src, dst in FILES.items():
        text = subprocess.run(
            ["git", "--git-dir", mirror, "show", f"1.9.1:{src}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        if not full:
            text = text.replace("big_shape = (1200, 1200)", "big_shape = (120, 120)")
        if dst == "dist_device_sync_kvstore.py":
            text = text.replace("mx.gpu(", "mx.cpu(")
        (folder / dst).write_text(text)


def run(folder, script, args, support, timeout, devices=1):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), support]))
    if devices > 1:
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    cmd = [sys.executable, "-m", "gluonjax.launch", "-n", "2", "--timeout", str(timeout)]
    cmd += [sys.executable, "-m", "gluonjax.run", script] + args
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - start


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirror", required=True, help="git mirror of apache/mxnet")
    p.add_argument("--support", required=True, help="folder with the nose stand-in")
    p.add_argument("--full", action="store_true", help="MXNet's array sizes")
    p.add_argument("--timeout", type=int, default=300, help="seconds per run")
    args = p.parse_args(argv)
    runs = [("dist_sync_kvstore.py", ["--type"] + t.split(), 1, 0) for t in SYNC_TYPES]
    runs += [("dist_device_sync_kvstore.py", [], 2, 0), ("dist_async_kvstore.py", [], 1, 1)]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        extract(args.mirror, folder, args.full)
        print(f"{'script':<30} {'args':<34} {'exit':>4} {'result':<8} {'s':>6}")
        for script, extra, devices, want_fail in runs:
            code, out, took = run(folder, script, extra, args.support, args.timeout, devices)
            ok = (code != 0 and "AsyncKVStoreError" in out) if want_fail else code == 0
            bad += not ok
            result = "ok" if ok else "FAILED"
            print(f"{script:<30} {' '.join(extra):<34} {code:>4} {result:<8} {took:6.1f}")
            if not ok:
                print(out[-3000:])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
