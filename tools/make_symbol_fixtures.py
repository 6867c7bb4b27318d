"""Build symbol-JSON fixtures with the real MXNet 1.9.1 (run with .venv-mxnet/bin/python).

For each graph below (built by the same function in MXNet and in gluonjax's
tests), writes to tests/fixtures/symbol/:

* ``<name>-symbol.json``: MXNet's ``tojson()``;
* ``<name>.npz``: ``arg:<name>``/``aux:<name>`` random values, the inputs and
  MXNet's outputs ``out<i>`` in inference mode;
* ``<name>-meta.json``: list_arguments / list_auxiliary_states / list_outputs,
  the input shapes and MXNet's ``infer_shape``/``infer_type`` results.

Usage: ``.venv-mxnet/bin/python tools/make_symbol_fixtures.py``
"""

from __future__ import annotations

import json
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "symbol")


def resnet_block(mx):
    """conv-bn-relu-conv-bn + shortcut, relu, pooling, flatten, fc, dropout, clip."""
    with mx.name.NameManager():
        data = mx.sym.var("data")
        c1 = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=4, name="conv1")
        b1 = mx.sym.BatchNorm(c1, fix_gamma=False, eps=1e-5, name="bn1")
        a1 = mx.sym.Activation(b1, act_type="relu", name="relu1")
        c2 = mx.sym.Convolution(
            a1, kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True, name="conv2"
        )
        b2 = mx.sym.BatchNorm(c2, name="bn2")
        short = mx.sym.Convolution(data, kernel=(1, 1), num_filter=4, name="short")
        add = mx.sym.elemwise_add(b2, short, name="add")
        a2 = mx.sym.Activation(add, act_type="relu", name="relu2")
        p = mx.sym.Pooling(a2, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
        f = mx.sym.Flatten(p, name="flat")
        fc = mx.sym.FullyConnected(f, num_hidden=5, name="fc")
        d = mx.sym.Dropout(fc, p=0.25, name="drop")
        return mx.sym.clip(d, a_min=-0.5, a_max=0.5, name="clip")


def inception_block(mx):
    """Four branches (1x1, 1x1-3x3, 1x1-5x5, pool-1x1) concatenated, then a head."""
    with mx.name.NameManager():
        data = mx.sym.var("data")

        def cbr(x, k, nf, name):
            pad = (k // 2, k // 2)
            x = mx.sym.Convolution(x, kernel=(k, k), pad=pad, num_filter=nf, name=name)
            x = mx.sym.BatchNorm(x, name=name + "_bn")
            return mx.sym.Activation(x, act_type="relu")

        b1 = cbr(data, 1, 2, "b1")
        b2 = cbr(cbr(data, 1, 2, "b2a"), 3, 3, "b2b")
        b3 = cbr(cbr(data, 1, 1, "b3a"), 5, 2, "b3b")
        p = mx.sym.Pooling(data, kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type="avg")
        b4 = cbr(p, 1, 2, "b4")
        cat = mx.sym.Concat(b1, b2, b3, b4, dim=1, name="concat")
        g = mx.sym.Pooling(cat, global_pool=True, kernel=(1, 1), pool_type="avg", name="gpool")
        f = mx.sym.Flatten(g)
        fc = mx.sym.FullyConnected(f, num_hidden=3, name="fc")
        t = mx.sym.Activation(fc, act_type="tanh")
        return mx.sym.Group([t, mx.sym.clip(fc + t, 0, 1)])


def misc_graph(mx):
    """Variable attributes, AttrScope, scalar operators, reshape/transpose/softmax, prelu."""
    with mx.name.NameManager():
        data = mx.sym.var("data", shape=(2, 6), lr_mult=0.5, init=mx.init.Uniform(0.1))
        with mx.attribute.AttrScope(ctx_group="stage1"):
            fc = mx.sym.FullyConnected(data, num_hidden=8, no_bias=True, name="fc")
        act = mx.sym.LeakyReLU(fc, act_type="prelu", name="prelu")
        r = mx.sym.reshape(act * 2 + 1, shape=(2, 2, 4))
        t = mx.sym.transpose(r, axes=(0, 2, 1))
        s = mx.sym.softmax(t, axis=-1)
        m = mx.sym.sum(s, axis=1, keepdims=True)
        sp = mx.sym.split(t, num_outputs=2, axis=2, name="split")
        return mx.sym.Group([m - 0.5, sp[1] / 3, mx.sym.Cast(sp[0], dtype="float16")])


GRAPHS = {
    "resnet_block": (resnet_block, {"data": (2, 3, 6, 6)}),
    "inception_block": (inception_block, {"data": (1, 3, 5, 5)}),
    "misc_graph": (misc_graph, {"data": (2, 6)}),
}


def _random_values(sym, shapes, rng):
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    args = {}
    for n, s in zip(sym.list_arguments(), arg_shapes):
        args[n] = rng.uniform(-1, 1, s).astype(np.float32)
    aux = {}
    for n, s in zip(sym.list_auxiliary_states(), aux_shapes):
        low = 0.5 if n.endswith("var") else -0.5
        aux[n] = rng.uniform(low, 1.0, s).astype(np.float32)
    return args, aux


def main():
    import mxnet as mx

    os.makedirs(OUT, exist_ok=True)
    rng = np.random.RandomState(7)
    for name, (build, shapes) in GRAPHS.items():
        sym = build(mx)
        args, aux = _random_values(sym, shapes, rng)
        exe = sym.bind(
            mx.cpu(),
            {k: mx.nd.array(v) for k, v in args.items()},
            aux_states={k: mx.nd.array(v) for k, v in aux.items()},
            grad_req="null",
        )
        outs = [o.asnumpy() for o in exe.forward(is_train=False)]
        with open(os.path.join(OUT, f"{name}-symbol.json"), "w") as f:
            f.write(sym.tojson())
        arrays = {f"arg:{k}": v for k, v in args.items()}
        arrays.update({f"aux:{k}": v for k, v in aux.items()})
        arrays.update({f"out{i}": o for i, o in enumerate(outs)})
        np.savez_compressed(os.path.join(OUT, f"{name}.npz"), **arrays)
        arg_s, out_s, aux_s = sym.infer_shape(**shapes)
        arg_t, out_t, aux_t = sym.infer_type(**{k: "float32" for k in shapes})
        meta = {
            "arguments": sym.list_arguments(),
            "aux_states": sym.list_auxiliary_states(),
            "outputs": sym.list_outputs(),
            "inputs": sym.list_inputs(),
            "input_shapes": shapes,
            "arg_shapes": arg_s,
            "out_shapes": out_s,
            "aux_shapes": aux_s,
            "arg_types": [np.dtype(t).name for t in arg_t],
            "out_types": [np.dtype(t).name for t in out_t],
            "aux_types": [np.dtype(t).name for t in aux_t],
            "internals": sym.get_internals().list_outputs(),
            "debug_str": sym.debug_str(),
            "attr_dict": sym.attr_dict(),
        }
        with open(os.path.join(OUT, f"{name}-meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        print(name, "outputs", [o.shape for o in outs])


if __name__ == "__main__":
    main()
