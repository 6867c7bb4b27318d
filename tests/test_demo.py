"""``python -m gluonjax.demo`` (what ``make demo`` runs) end to end, in a subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from tests.mxnet_ref import needs_mxnet, run_mxnet

FILES = [
    "lenet-symbol.json",
    "lenet-0000.params",
    "lenet-0000.stablehlo",
    "lenet-0000.manifest.json",
]


def _demo(workdir, *args):
    return subprocess.run(
        [sys.executable, "-m", "gluonjax.demo", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=400,
    )


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """The demo exactly as ``make demo`` runs it: no flags (speed runs, progress, 5 epochs)."""
    work = tmp_path_factory.mktemp("demo")
    return _demo(work), work / "demo_out"


def _check_report(res, min_acc):
    assert res.returncode == 0, res.stdout + res.stderr
    acc = re.search(r"^test accuracy: ([0-9.]+) \(300 images\)$", res.stdout, re.M)
    assert acc, res.stdout
    assert float(acc.group(1)) > min_acc
    assert res.stdout.count(" OK\n") == 2  # SymbolBlock.imports and deploy.load both agree
    assert "MISMATCH" not in res.stdout and "FAILED" not in res.stdout


def test_demo_exits_zero_and_reports(demo_run):
    res, _ = demo_run
    _check_report(res, 0.95)
    assert "speed measured now" in res.stdout and "training step" in res.stdout
    assert res.stdout.count("epoch ") >= 5  # one progress line per epoch


def test_demo_trains_eagerly(tmp_path):
    """``--no-hybridize``: the same LeNet trained op by op (the user HybridBlock unhybridized)."""
    res = _demo(tmp_path, "--no-hybridize", "--epochs", "2", "--out", str(tmp_path / "o"))
    _check_report(res, 0.8)
    assert "eagerly" in res.stdout or "op by op" in res.stdout, res.stdout


def test_demo_quiet(tmp_path):
    res = _demo(tmp_path, "--quiet", "--epochs", "1", "--out", str(tmp_path / "o"))
    _check_report(res, 0.5)  # one epoch; chance is 0.1
    assert "[" not in res.stdout.split("training LeNet")[1].split("test accuracy")[0]


def test_demo_files_present(demo_run):
    res, out = demo_run
    assert res.returncode == 0, res.stderr
    for f in FILES:
        assert (out / f).stat().st_size > 0, f
        assert str(out) in res.stdout
    graph = json.loads((out / "lenet-symbol.json").read_text())
    ops = [n["op"] for n in graph["nodes"] if n["op"] != "null"]
    assert ops.count("Convolution") == 2 and ops.count("FullyConnected") == 3
    manifest = json.loads((out / "lenet-0000.manifest.json").read_text())
    assert manifest["inputs"][0]["shape"][1:] == [1, 28, 28]


@needs_mxnet
def test_exported_lenet_runs_in_real_mxnet(demo_run):
    """Real MXNet 1.9.1 loads the demo's JSON + params; its test accuracy matches the demo's."""
    res, out = demo_run
    assert res.returncode == 0, res.stderr
    from gluonjax.data import digits

    x, y = digits("test")
    np.save(out / "x.npy", x)
    script = (
        "import warnings, numpy as np, mxnet as mx\n"
        "warnings.simplefilter('ignore')\n"
        "net = mx.gluon.SymbolBlock.imports('lenet-symbol.json', ['data'], 'lenet-0000.params')\n"
        "np.save('mx_out.npy', net(mx.nd.array(np.load('x.npy'))).asnumpy())\n"
    )
    run_mxnet(script, cwd=out)
    mx_out = np.load(out / "mx_out.npy")
    acc = float(re.search(r"^test accuracy: ([0-9.]+)", res.stdout, re.M).group(1))
    assert mx_out.shape == (300, 10)
    assert abs(float((mx_out.argmax(1) == y).mean()) - acc) < 1e-3


def test_demo_rejects_bad_arguments(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "gluonjax.demo", "--epochs", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2 and "--epochs" in res.stderr


def test_progress_bar_lines():
    import io

    from gluonjax.demo import ProgressBar

    buf = io.StringIO()
    bar = ProgressBar(4, "epoch 1/1", width=8, stream=buf)
    bar.update(2, "x")  # not a terminal: nothing until close
    bar.close("loss 0.5")
    assert buf.getvalue().startswith("epoch 1/1 [########] 4/4 loss 0.5 (")
    assert buf.getvalue().count("\n") == 1
    quiet = io.StringIO()
    ProgressBar(4, "e", enabled=False, stream=quiet).close("z")
    assert quiet.getvalue() == ""
