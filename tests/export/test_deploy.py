"""gluonjax.deploy: run exported artifacts with jax only, or with IREE and no jax."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap

import export_nets as nets
import jax
import numpy as np
import pytest

import gluonjax as mx
from gluonjax import deploy as gdeploy

DEPLOY_PY = os.path.join(os.path.dirname(mx.__file__), "deploy.py")
HAVE_IREE = (
    importlib.util.find_spec("iree.compiler") is not None
    and importlib.util.find_spec("iree.runtime") is not None
)


def _standalone(tmp_path, body, inputs):
    """Run ``body`` in a fresh interpreter next to a copy of deploy.py; return its outputs."""
    shutil.copy(DEPLOY_PY, tmp_path / "deploy.py")
    np.savez(tmp_path / "inputs.npz", *inputs)
    script = (
        textwrap.dedent("""
        import sys
        sys.path.insert(0, {d!r})
        import numpy as np
        import deploy
        xs = np.load({d!r} + '/inputs.npz')
        xs = [xs['arr_%d' % i] for i in range(len(xs.files))]
        outs = []
    """).format(d=str(tmp_path))
        + textwrap.dedent(body)
        + textwrap.dedent("""
        assert 'gluonjax' not in sys.modules, 'gluonjax was imported'
        np.savez({d!r} + '/outputs.npz', *[np.asarray(o) for o in outs])
    """).format(d=str(tmp_path))
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=str(tmp_path),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = np.load(tmp_path / "outputs.npz")
    return [res[f"arr_{i}"] for i in range(len(res.files))]


CASES = dict(nets.NETS, jnp=(nets.jnp_block, nets.jnp_block_ref, (3, 4)))


@pytest.mark.parametrize("name,batches", [("mlp", (3, 7)), ("convnet", (2, 5)), ("jnp", (1, 4))])
def test_jax_only_process_two_batch_sizes(tmp_path, name, batches):
    make, ref, shape = CASES[name]
    net = make()
    net.hybridize()
    xs = [
        np.random.RandomState(b).normal(size=(b,) + shape[1:]).astype(np.float32) for b in batches
    ]
    net(mx.nd.array(xs[0]))
    net.export(str(tmp_path / "net"), example_inputs=[mx.nd.array(xs[0])])
    outs = _standalone(
        tmp_path,
        """
        assert 'jax' not in sys.modules  # deploy imports jax only when loading
        f = deploy.load('net')
        outs = [f(x) for x in xs]
    """,
        xs,
    )
    for x, out in zip(xs, outs, strict=True):
        assert out.shape == (x.shape[0],) + ref(net, x).shape[1:]
        np.testing.assert_allclose(out, ref(net, x), rtol=1e-5, atol=1e-5)
        mine = net(mx.nd.array(x))
        np.testing.assert_allclose(
            out, np.asarray(getattr(mine, "_data", mine)), rtol=1e-6, atol=1e-6
        )


def test_artifact_is_differentiable_for_fine_tuning(tmp_path):
    net = nets.mlp()
    x = np.random.RandomState(0).normal(size=(4, 10)).astype(np.float32)
    net.export(str(tmp_path / "m"), example_inputs=[mx.nd.array(x)])
    f = gdeploy.load(str(tmp_path / "m"))
    names = [p["name"] for p in f.manifest["params"]]

    def loss(params):
        return f.exported.call(*params, x)[0].sum()

    grads = jax.grad(loss)(list(f.params))
    # analytic: d sum(y) / d b3 = batch size; d sum(y) / d W3 = sum_n h2[n]
    h = x.astype(np.float64)
    layers = list(net._children.values())
    for layer in layers[:2]:
        h = np.maximum(h @ layer.weight.data().asnumpy().T + layer.bias.data().asnumpy(), 0)
    g = dict(zip(names, grads, strict=True))
    np.testing.assert_allclose(np.asarray(g["2.bias"]), np.full(2, 4.0), rtol=1e-6)
    # float32 program against a float64 reference: h2's small entries (1e-2) carry the
    # rounding of the layers before them (about 1e-7 absolute)
    np.testing.assert_allclose(
        np.asarray(g["2.weight"]), np.tile(h.sum(0), (2, 1)), rtol=1e-5, atol=1e-6
    )


def test_deploy_checks_inputs_and_files(tmp_path):
    net = nets.mlp()
    net.export(str(tmp_path / "m"), example_inputs=[mx.nd.ones((2, 10))])
    f = gdeploy.load(str(tmp_path / "m"))
    with pytest.raises(gdeploy.DeployError, match="must be"):
        f(np.ones((2, 11), np.float32))
    with pytest.raises(gdeploy.DeployError, match="expected 1 input"):
        f(np.ones((2, 10), np.float32), np.ones((2, 10), np.float32))
    with pytest.raises(gdeploy.DeployError, match="manifest"):
        gdeploy.load(str(tmp_path / "m"), epoch=3)
    params = tmp_path / "m-0000.params"
    params.write_bytes(params.read_bytes()[:-5])
    with pytest.raises(gdeploy.DeployError):
        gdeploy.load(str(tmp_path / "m"))


@pytest.mark.skipif(not HAVE_IREE, reason="iree-base-compiler / iree-base-runtime not installed")
@pytest.mark.parametrize("name", ["mlp", "convnet"])
def test_iree_module_runs_without_jax(tmp_path, name):
    make, ref, shape = nets.NETS[name]
    net = make()
    x = np.random.RandomState(3).normal(size=shape).astype(np.float32)
    files = net.export(str(tmp_path / "net"), example_inputs=[mx.nd.array(x)], iree=True)
    assert {"net-0000.iree.mlir", "net-0000.vmfb"} <= {os.path.basename(f) for f in files}
    (out,) = _standalone(
        tmp_path,
        """
        f = deploy.load_iree('net')
        outs = [f(xs[0])]
        assert 'jax' not in sys.modules, 'jax was imported'
    """,
        [x],
    )
    np.testing.assert_allclose(out, ref(net, x), rtol=1e-5, atol=1e-5)
