"""The persistent compilation cache: jax keeps no size limit (its LRU scans the whole
directory on every write); gluonjax trims the directory once, at the exit of a process
that wrote to it (gluonjax._compile.trim_cache)."""

from __future__ import annotations

import os
import subprocess
import sys

from gluonjax import _compile


def _entry(d, key, size, when):
    path = os.path.join(d, f"{key}-cache")
    with open(path, "wb") as f:
        f.write(b"x" * size)
    os.utime(path, ns=(when, when))
    with open(os.path.join(d, f"{key}-atime"), "wb") as f:
        f.write(b"t")
    return path


def test_trim_deletes_the_least_recently_used_down_to_90_percent(tmp_path):
    d = str(tmp_path)
    for i in range(10):  # entry i used at time i: 0 is the oldest
        _entry(d, f"k{i}", 100, (i + 1) * 10**9)
    with open(os.path.join(d, "unrelated.txt"), "w") as f:
        f.write("kept")
    assert _compile.trim_cache(d, limit=2000) == 0  # under the limit: nothing goes
    assert _compile.trim_cache(d, limit=800) == 3  # 1000 bytes -> at most 720
    left = sorted(n for n in os.listdir(d) if n.endswith("-cache"))
    assert left == [f"k{i}-cache" for i in range(3, 10)]
    assert not os.path.exists(os.path.join(d, "k0-atime"))  # its jax LRU twin went too
    assert os.path.exists(os.path.join(d, "unrelated.txt"))


def test_a_missing_directory_trims_nothing(tmp_path):
    assert _compile.trim_cache(str(tmp_path / "absent"), limit=1) == 0


def test_a_process_that_compiles_leaves_jax_without_a_size_limit(tmp_path):
    code = (
        "import gluonjax as mx, jax\n"
        "x = mx.nd.ones((3, 5)); (x + 1).asnumpy()\n"
        "print(jax.config.jax_compilation_cache_max_size)\n"
    )
    env = dict(os.environ, GLUONJAX_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "-1"
