"""simple_bind's ``group2ctx``: arguments made in an ``AttrScope(ctx_group=...)`` get the
group's context, logical ones (``cpu(1)`` without a second device) included, as in
MXNet's test_multi_device_exec."""

import numpy as np

import gluonjax as mx


def _mlp():
    with mx.AttrScope(ctx_group="stage1"):
        data = mx.sym.Variable("data")
        act1 = mx.sym.Activation(mx.sym.FullyConnected(data, name="fc1", num_hidden=8), "relu")
    with mx.AttrScope(ctx_group="stage2"):
        out = mx.sym.SoftmaxOutput(
            mx.sym.FullyConnected(act1, name="fc2", num_hidden=3), name="softmax"
        )
    return out, set(act1.list_arguments())


def test_arguments_take_their_groups_context():
    mlp, stage1 = _mlp()
    g2c = {"stage1": mx.cpu(1), "stage2": mx.cpu(2)}
    for req in ("write", {n: "null" if n == "data" else "write" for n in mlp.list_arguments()}):
        exe = mlp.simple_bind(mx.cpu(0), group2ctx=g2c, data=(2, 5), grad_req=req)
        for arr, name in zip(exe.arg_arrays, mlp.list_arguments(), strict=True):
            assert arr.context == (g2c["stage1"] if name in stage1 else g2c["stage2"]), name
        for g, name in zip(exe.grad_arrays, mlp.list_arguments(), strict=True):
            if g is not None:
                assert g.context == (g2c["stage1"] if name in stage1 else g2c["stage2"]), name


def test_grouped_executor_computes_as_one_context():
    mlp, _ = _mlp()
    rs = np.random.RandomState(0)
    values = {
        n: rs.randn(*s) for n, s in zip(mlp.list_arguments(), mlp.infer_shape(data=(2, 5))[0])
    }
    values["softmax_label"] = np.array([0.0, 2.0])
    outs = []
    for g2c in ({"stage1": mx.cpu(1), "stage2": mx.cpu(2)}, None):
        exe = mlp.simple_bind(mx.cpu(0), group2ctx=g2c, data=(2, 5))
        for n, v in values.items():
            exe.arg_dict[n][:] = v
        outs.append(exe.forward()[0].asnumpy())
    np.testing.assert_array_equal(outs[0], outs[1])
