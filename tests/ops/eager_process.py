"""Run a gluonjax script in a fresh process with its own compile cache (the eager
store's tests: what a second process reads, writes and compiles)."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def run_script(script, cache, **env):
    """Run ``script`` with ``GLUONJAX_CACHE_DIR=cache`` (and ``env``); the JSON object
    its last line prints."""
    full = dict(os.environ, GLUONJAX_CACHE_DIR=str(cache), **env)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=full, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
