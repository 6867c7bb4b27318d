"""Module checkpoint written by MXNet 1.9.1 (run with .venv-mxnet/bin/python).

Writes tests/fixtures/module/: mlp-symbol.json and mlp-0001.params (a tiny
FullyConnected-BatchNorm-Activation-FullyConnected-SoftmaxOutput with fixed
weights and non-trivial BatchNorm statistics), and mlp-io.npz with an input
batch, labels, MXNet's inference outputs, and the parameters after two
SGD (momentum 0.9, wd 1e-3) training steps of Module.forward_backward/update.
"""

import os

import mxnet as mx
import numpy as np


def build():
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=6, name="fc1")
    net = mx.sym.BatchNorm(net, fix_gamma=False, name="bn1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def main():
    root = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "module")
    os.makedirs(root, exist_ok=True)
    rng = np.random.RandomState(42)
    sym = build()
    arg_params = {
        "fc1_weight": rng.randn(6, 4) * 0.5,
        "fc1_bias": rng.randn(6) * 0.1,
        "bn1_gamma": 1 + rng.rand(6) * 0.5,
        "bn1_beta": rng.randn(6) * 0.1,
        "fc2_weight": rng.randn(3, 6) * 0.5,
        "fc2_bias": rng.randn(3) * 0.1,
    }
    aux_params = {"bn1_moving_mean": rng.randn(6) * 0.2, "bn1_moving_var": 1 + rng.rand(6)}
    arg_params = {k: mx.nd.array(v) for k, v in arg_params.items()}
    aux_params = {k: mx.nd.array(v) for k, v in aux_params.items()}
    x = rng.randn(5, 4).astype(np.float32)
    y = np.array([0, 1, 2, 1, 0], np.float32)

    mod = mx.mod.Module(sym, context=mx.cpu())
    mod.bind(data_shapes=[("data", x.shape)], label_shapes=[("softmax_label", y.shape)])
    mod.set_params(arg_params, aux_params)
    mod.save_checkpoint(os.path.join(root, "mlp"), 1)
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]), is_train=False)
    out = mod.get_outputs()[0].asnumpy()

    mod.init_optimizer(
        optimizer="sgd", optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3}
    )
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    for _ in range(2):
        mod.forward_backward(batch)
        mod.update()
    trained_args, trained_aux = mod.get_params()
    save = {"x": x, "y": y, "out": out}
    save.update({f"trained_arg:{k}": v.asnumpy() for k, v in trained_args.items()})
    save.update({f"trained_aux:{k}": v.asnumpy() for k, v in trained_aux.items()})
    np.savez(os.path.join(root, "mlp-io.npz"), **save)


if __name__ == "__main__":
    main()
