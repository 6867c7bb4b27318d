"""One command for a GPU machine: ``python -m benchmarks --gpu [--out PATH]``.

On a machine with one NVIDIA GPU (jax with CUDA; PyTorch optional) it

1. runs a correctness pass: pytest on the training-loop and hybridize tests (``TESTS``,
   ``-m "not mxnet"``, gluonjax's default context set to ``gpu(0)`` by the plugin
   ``benchmarks._gpu_ctx``, float32 matmuls at full precision so the tests' tolerances hold);
2. times on the GPU every row of ``bench_train``, ``bench_first_step``, ``bench_rnn`` and
   ``bench_gluoncv``: gluonjax (under ``with mx.gpu(0)``) against pure JAX and, when
   ``torch.cuda.is_available()``, PyTorch on CUDA (MXNet 1.9.1 has no GPU build here);
3. prints one table (row, gluonjax ms, pure JAX ms, PyTorch ms, ratios) and writes it to
   ``--out`` (``.json``: JSON; any other name: markdown).

Every measurement runs in a child process, one after another, so only one library holds
the GPU at a time; bench_first_step's rows each get a fresh process, as on the CPU ("cold":
an empty persistent compilation cache, which the hybridized and pure JAX processes fill for
the "second run" rows). The run stops starting processes when its time budget (``--budget``,
default 450 s, correctness pass included) is spent; rows not reached say so.

``JAX_PLATFORMS=cpu python -m benchmarks --gpu --dry-run`` runs the same code on the CPU
with tiny sizes (batch 2, 32x32 images, one-stage ResNets, a few iterations), all jobs in
one child process, and a smaller test set; its numbers mean nothing, it checks the run.
Without a GPU and without ``--dry-run`` the command exits with status 2 and says so.
Exit status 1: the correctness pass or a row failed.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import _gpu_gluoncv as G
from . import _gpu_jobs as J
from ._gpu_check import DRY_TESTS, ROOT, TESTS, correctness, text
from ._gpu_table import render, to_json, to_markdown

FULL = {
    "ctx": "gpu",
    "torch_device": "cuda",
    "n_train": 1000,
    "n_eager": 50,
    "n_rnn": 20,
    "rounds": 5,
    "first": {},
    "rnn": {},
    "gluoncv": {
        **{"batch": 32, "size": 224, "repeats": 10, "mini": False},
        **{"infer_layers": [3, 4, 6, 3], "train_layers": [2, 2, 2, 2]},
    },
}
DRY = {
    **{"ctx": "cpu", "torch_device": "cpu", "n_train": 2, "n_eager": 1, "n_rnn": 1, "rounds": 1},
    "first": {"batch": 2, "steps": 2, "mini_resnet": True},
    "rnn": {"VOCAB": 50, "EMBED": 8, "HIDDEN": 8, "BATCH": 2, "BPTT": 3, "INFER_LEN": 4},
    "gluoncv": {
        **{"batch": 2, "size": 32, "repeats": 1, "mini": True},
        **{"infer_layers": [1, 1, 1, 1], "train_layers": [1, 1, 1, 1]},
    },
}
NO_GPU = (
    "no GPU found: jax sees {what}. This command times gluonjax on an NVIDIA GPU "
    "(pip install 'jax[cuda12]'). To check the run itself on the CPU:\n"
    "  JAX_PLATFORMS=cpu python -m benchmarks --gpu --dry-run"
)
# a PyTorch child imports gluonjax (bench_rnn) but must never let jax take the GPU's memory
TORCH_ENV = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
PROBE = """
import json, jax
d = jax.devices()
out = {"platform": d[0].platform, "device": d[0].device_kind, "count": len(d)}
try:
    import torch
    out["torch_cuda"] = torch.cuda.is_available()
    out["torch"] = torch.__version__
except ImportError:
    out["torch_cuda"], out["torch"] = False, None
print(json.dumps(out))
"""


class Run:
    """The plan, the child processes and the collected cells of one run."""

    def __init__(self, cfg, budget, dry, start=None):
        self.cfg, self.dry = cfg, dry
        self.start = time.perf_counter() if start is None else start
        self.deadline = self.start + budget
        self.cells, self.problems, self.info = {}, [], {}

    def left(self):
        return self.deadline - time.perf_counter()

    def log(self, msg):
        sys.stderr.write(f"[{time.perf_counter() - self.start:6.0f} s] {msg}\n")
        sys.stderr.flush()

    def spawn(self, what, argv, env_extra, cap):
        """Run one child: ``(stdout, stderr)`` (empty when the budget is spent)."""
        if self.left() < 15:
            self.problems.append(f"{what}: not run (time budget spent)")
            return "", ""
        env = dict(os.environ, GLUONJAX_COMPILE_NOTICE="0", PYTHONPATH=str(ROOT))
        env.update(env_extra)
        if self.dry:
            env.setdefault("JAX_PLATFORMS", "cpu")
        t0 = time.perf_counter()
        try:
            p = subprocess.run(
                argv, cwd=ROOT, env=env, capture_output=True, text=True,
                timeout=min(cap, self.left()),
            )  # fmt: skip
            out, err, rc = p.stdout, p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            out, err, rc = text(e.stdout), text(e.stderr), "timeout"
        if rc != 0:
            self.problems.append(f"{what}: exit {rc} ({(err.strip().splitlines() or ['?'])[-1]})")
            self.tail(what, err)
        self.log(f"{what}: {'done' if rc == 0 else 'FAILED'} in {time.perf_counter() - t0:.1f} s")
        return out, err

    def tail(self, what, err):
        self.log(f"{what}: its stderr ends:\n" + "\n".join(err.splitlines()[-30:]))

    def add(self, row, col, sec, note=""):
        cell = self.cells.setdefault(row, {"note": []})
        cell[col] = sec
        if note:
            cell["note"].append(note)

    def jobs(self, jobs, env_extra=None, cap=240):
        spec = json.dumps({"cfg": self.cfg, "jobs": jobs})
        what = ", ".join(" ".join(j) for j in jobs) if len(jobs) < 4 else f"{len(jobs)} jobs"
        argv = [sys.executable, "-m", "benchmarks._gpu_jobs", spec]
        out, err = self.spawn(what, argv, env_extra or {}, cap)
        for line in out.splitlines():
            if not line.startswith(J.MARK):
                continue
            msg = json.loads(line[len(J.MARK) :])
            if "error" in msg:
                self.problems.append(f"{' '.join(msg['job'])}: {msg['error']}")
                self.tail(" ".join(msg["job"]), err)
            if "seconds" in msg and len(jobs) > 1:
                self.log(f"  {' '.join(msg['job'])}: {msg['seconds']:.1f} s")
            for row, col, sec, note in msg.get("cells", []):
                self.add(row, col, sec, note)
            self.info.update(msg.get("info", {}))

    def gluoncv(self, cache):
        """bench_gluoncv's gluonjax child: cold (an empty cache at ``cache``, filled), then
        a second process timing the first outputs again with that cache."""
        for run in ("cold", "second"):
            script = G.gluoncv_script(self.cfg, first_only=run == "second")
            argv = [sys.executable, "-c", script]
            out, _ = self.spawn(f"gluoncv {run}", argv, {"GLUONJAX_CACHE_DIR": cache}, 300)
            if not out.strip():  # not run, or failed: spawn has said so
                return
            try:
                for cell in G.cells(self.cfg, run, json.loads(out.strip().splitlines()[-1])):
                    self.add(*cell)
            except (IndexError, ValueError, KeyError, RuntimeError) as e:
                self.problems.append(f"gluoncv {run}: no result ({type(e).__name__}: {e})")
                return

    def execute(self, torch_ok):
        """Every timing job, in order of importance (the budget may cut the tail)."""
        first = []
        with tempfile.TemporaryDirectory() as tmp:
            for kind in J.KINDS:
                again = J.first_modes(kind, "second")
                for mode in J.first_modes(kind, "cold") + (["torch"] if torch_ok else []):
                    first.append((["first", kind, mode, "cold"], mode in again))
                for mode in again:  # a new process with the cache its cold run filled
                    first.append((["first", kind, mode, "second"], True))
            main = [["train"], ["rnn"]] + ([["torch"]] if torch_ok else [])
            if self.dry:  # one process: the same jobs, no fresh processes, no caches
                self.jobs(main + [job for job, _ in first], cap=600)
                # the caller's persistent cache, if any: a dry run's compiles are not timed
                self.gluoncv(os.environ.get("GLUONJAX_CACHE_DIR") or os.path.join(tmp, "gcv"))
                return
            for job in main:
                self.jobs([job], TORCH_ENV if job == ["torch"] else {})
            self.gluoncv(os.path.join(tmp, "gluoncv"))
            for job, cached in first:
                env = {"GLUONJAX_CACHE_DIR": "off"}
                if cached:
                    cache = os.path.join(tmp, f"{job[1]}-{job[2]}")
                    env = {"GLUONJAX_CACHE_DIR": cache, "BENCH_JAX_CACHE": cache}
                self.jobs([job], {**env, **(TORCH_ENV if job[2] == "torch" else {})}, cap=150)


def _no_gpu(what):
    sys.stderr.write(NO_GPU.format(what=what) + "\n")
    raise SystemExit(2)


def probe():
    """What the machine has: jax's first device and PyTorch's CUDA (a child process, so
    this one never holds GPU memory); exits with status 2 when there is no GPU."""
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false")
    p = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=300
    )
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["?"])[-1]
        _no_gpu(f"nothing (jax failed: {tail})")
    info = json.loads(p.stdout.strip().splitlines()[-1])
    if info["platform"] not in ("gpu", "cuda"):
        _no_gpu(f"{info['count']} {info['platform']} device(s) only")
    return info


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks --gpu",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--dry-run", action="store_true", help="tiny sizes on the CPU, no GPU check")
    ap.add_argument("--out", help="also write the table here (.json: JSON, else markdown)")
    ap.add_argument("--budget", type=float, default=450.0, help="seconds for the whole run")
    ap.add_argument("--no-correctness", action="store_true", help="skip the pytest pass")
    args = ap.parse_args(argv)
    start = time.perf_counter()  # the budget counts from here, the GPU probe included
    jax = importlib.metadata.version("jax")
    if args.dry_run:
        cfg, files = DRY, DRY_TESTS
        torch = importlib.util.find_spec("torch")
        torch_ok = torch is not None
        device = f"jax {jax} on the CPU (dry run: tiny sizes, numbers mean nothing)"
    else:
        cfg, files = FULL, TESTS
        info = probe()
        torch, torch_ok = info["torch"], info["torch_cuda"]
        device = f"jax {jax} on {info['device']} ({info['count']} device(s))"
    run = Run(cfg, args.budget, args.dry_run, start)
    check = None
    if not args.no_correctness:
        run.log(f"correctness: pytest {' '.join(files)}")
        check = correctness(cfg, files, timeout=max(30.0, min(240.0, run.left() - 60)))
        run.log(f"correctness: {check['passed']} passed, {check['failed']} failed")
    run.execute(torch_ok)
    if not torch_ok:
        run.info["torch"] = "PyTorch: " + ("not installed" if torch is None else "no CUDA")
    table = {
        "device": device,
        "torch": run.info.get("torch", "PyTorch: failed"),
        "dry_run": args.dry_run,
        "correctness": check,
        "rows": J.rows(),
        "cells": run.cells,
        "torch_ok": torch_ok,
        "problems": run.problems,
        "seconds": time.perf_counter() - run.start,
    }
    print(render(table))
    if args.out:
        text = to_json(table) if args.out.endswith(".json") else to_markdown(table)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    failed = (check is not None and not check["ok"]) or any(
        "time budget" not in p for p in run.problems
    )
    return 1 if failed else 0
