"""Record MXNet 1.9.1's ``mx.mod.SequentialModule`` for
``tests/module/test_sequential_module.py``.

Run with the reference interpreter::

    MXNET_MKLDNN_ENABLED=0 .venv-mxnet/bin/python tools/make_sequential_module_fixtures.py

Two modules are chained as in MXNet's ``example/module/sequential_module.py``:
``fc1 -> bn1 -> relu1`` (no labels) then ``fc2 -> relu2 -> fc3 -> SoftmaxOutput``
(``take_labels=True, auto_wiring=True``), from seeded parameters.

Writes ``tests/fixtures/module/sequential.npz``:

* ``x``, ``y``: 12 samples of 5 features and their labels (3 classes);
* ``init.<name>``: the initial parameters (``fc1_weight`` ..., ``bn1_moving_mean`` ...);
* ``step<k>.out``, ``step<k>.dx`` (the first module's input gradient),
  ``step<k>.g.<name>`` (gradients) and ``step<k>.p.<name>`` (parameters after the
  update) for three ``forward(is_train=True)/backward/update`` steps on batches of 4
  (SGD, learning rate 0.1, momentum 0.9, wd 1e-3);
* ``fit.<name>``: the parameters after ``fit`` (2 epochs over ``NDArrayIter(x, y, 4)``
  without shuffling, the same optimizer), ``fit.acc``: ``score`` accuracy after it,
  ``fit.pred``: ``predict`` on ``x``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import mxnet as mx
import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "module"
OPT = {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3}


def _modules():
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=6, name="fc1")
    net = mx.sym.BatchNorm(net, fix_gamma=False, name="bn1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    mod1 = mx.mod.Module(net, label_names=[], context=mx.cpu())
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=4, name="fc2")
    net = mx.sym.Activation(net, act_type="relu", name="relu2")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="fc3")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    mod2 = mx.mod.Module(net, context=mx.cpu())
    seq = mx.mod.SequentialModule()
    seq.add(mod1).add(mod2, take_labels=True, auto_wiring=True)
    return seq, mod1, mod2


def _init(rng):
    arg = {
        "fc1_weight": rng.randn(6, 5) * 0.5,
        "fc1_bias": rng.randn(6) * 0.1,
        "bn1_gamma": 1 + rng.rand(6) * 0.5,
        "bn1_beta": rng.randn(6) * 0.1,
        "fc2_weight": rng.randn(4, 6) * 0.5,
        "fc2_bias": rng.randn(4) * 0.1 + 0.2,
        "fc3_weight": rng.randn(3, 4) * 0.5,
        "fc3_bias": rng.randn(3) * 0.1,
    }
    aux = {"bn1_moving_mean": rng.randn(6) * 0.2, "bn1_moving_var": 1 + rng.rand(6)}
    return {k: v.astype(np.float32) for k, v in arg.items()}, {
        k: v.astype(np.float32) for k, v in aux.items()
    }


def _nd(d):
    return {k: mx.nd.array(v) for k, v in d.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    out_dir = parser.parse_args().out
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.RandomState(7)
    arg, aux = _init(rng)
    x = rng.randn(12, 5).astype(np.float32)
    y = rng.randint(0, 3, size=12).astype(np.float32)
    save = {"x": x, "y": y}
    save.update({f"init.{k}": v for k, v in {**arg, **aux}.items()})

    seq, mod1, mod2 = _modules()
    seq.bind(
        data_shapes=[("data", (4, 5))],
        label_shapes=[("softmax_label", (4,))],
        inputs_need_grad=True,
    )
    seq.init_params(arg_params=_nd(arg), aux_params=_nd(aux))
    seq.init_optimizer(optimizer="sgd", optimizer_params=OPT)
    for k in range(3):
        sl = slice(4 * k, 4 * k + 4)
        batch = mx.io.DataBatch([mx.nd.array(x[sl])], [mx.nd.array(y[sl])])
        seq.forward(batch, is_train=True)
        seq.backward()
        save[f"step{k}.out"] = seq.get_outputs()[0].asnumpy()
        # MXNet 1.9.1's SequentialModule.get_input_grads asserts its own
        # inputs_need_grad, which its bind never sets: ask the first module.
        save[f"step{k}.dx"] = mod1.get_input_grads()[0].asnumpy()
        for mod in (mod1, mod2):
            ex = mod._exec_group.execs[0]
            for name, g in ex.grad_dict.items():
                if g is not None and name in mod._param_names:
                    save[f"step{k}.g.{name}"] = g.asnumpy()
        seq.update()
        a, b = seq.get_params()
        save.update({f"step{k}.p.{n}": v.asnumpy() for n, v in {**a, **b}.items()})

    seq, _, _ = _modules()
    it = mx.io.NDArrayIter(x, y, batch_size=4, shuffle=False)
    seq.fit(
        it,
        num_epoch=2,
        optimizer="sgd",
        optimizer_params=OPT,
        arg_params=_nd(arg),
        aux_params=_nd(aux),
    )
    a, b = seq.get_params()
    save.update({f"fit.{n}": v.asnumpy() for n, v in {**a, **b}.items()})
    save["fit.acc"] = np.array(dict(seq.score(it, "acc"))["accuracy"])
    save["fit.pred"] = seq.predict(mx.io.NDArrayIter(x, y, batch_size=4)).asnumpy()
    np.savez(out_dir / "sequential.npz", **save)
    print(f"wrote {out_dir / 'sequential.npz'} ({len(save)} arrays)")


if __name__ == "__main__":
    main()
