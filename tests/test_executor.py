"""Executor (Symbol.bind / simple_bind / eval): outputs and gradients against NumPy and
jax.grad of the same math written here; grad_req, aux updates, reshape, copy_params_from.
Behaviours checked with MXNet 1.9.1 (see comments)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gluonjax as mx

RNG = np.random.RandomState(0)


def _fc_net():
    x, w, b = mx.sym.var("x"), mx.sym.var("w"), mx.sym.var("b")
    return mx.sym.broadcast_mul(
        mx.sym.tanh(mx.sym.FullyConnected(x, w, b, num_hidden=3)), x.sum(axis=1, keepdims=True)
    )


def _fc_ref(x, w, b):
    return jnp.tanh(x @ w.T + b) * x.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("as_dict", [True, False])
@pytest.mark.parametrize("n", [1, 4])
def test_forward_backward_vs_jax_grad(as_dict, n):
    vals = {"x": RNG.randn(n, 5), "w": RNG.randn(3, 5), "b": RNG.randn(3)}
    vals = {k: v.astype(np.float32) for k, v in vals.items()}
    head = RNG.randn(n, 3).astype(np.float32)
    sym = _fc_net()
    assert sym.list_arguments() == ["x", "w", "b"]
    args = {k: mx.nd.array(v) for k, v in vals.items()}
    grads = {k: mx.nd.zeros(v.shape) for k, v in vals.items()}
    if not as_dict:
        args, grads = [args[k] for k in "xwb"], [grads[k] for k in "xwb"]
    ex = sym.bind(mx.cpu(), args, args_grad=grads)
    out = ex.forward(is_train=True)
    ref = _fc_ref(*(vals[k].astype(np.float64) for k in "xwb"))
    np.testing.assert_allclose(out[0].asnumpy(), np.asarray(ref), rtol=1e-5, atol=1e-5)
    ex.backward(mx.nd.array(head))
    ref_g = jax.grad(lambda x, w, b: jnp.sum(_fc_ref(x, w, b) * head), argnums=(0, 1, 2))(
        *(jnp.asarray(vals[k]) for k in "xwb")
    )
    for k, g in zip("xwb", ref_g, strict=False):
        np.testing.assert_allclose(ex.grad_dict[k].asnumpy(), np.asarray(g), rtol=1e-4, atol=1e-5)


def test_bound_arrays_are_the_callers_and_outputs_keep_identity():
    a = mx.nd.array([1.0, 2.0])
    b = mx.nd.array([3.0, 4.0])
    va = mx.sym.var("a")
    with mx.name.NameManager():  # fresh auto-name counters: the output is _plus0
        ex = (va * mx.sym.var("b") + va).bind(mx.cpu(), [a, b])
    assert ex.arg_dict["a"] is a
    out0 = ex.outputs[0]
    np.testing.assert_array_equal(out0.asnumpy(), [0, 0])  # zeros before forward
    ex.forward()
    np.testing.assert_array_equal(out0.asnumpy(), [4, 10])
    a[:] = 5  # writes by the caller are seen by the executor
    ex.forward()
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), [20, 25])
    assert ex.outputs[0] is out0
    ex.forward(a=np.array([7, 7]))  # kwargs copy into the arrays (MXNet: same)
    np.testing.assert_array_equal(a.asnumpy(), [7, 7])
    np.testing.assert_array_equal(ex.output_dict["_plus0_output"].asnumpy(), [28, 35])
    with pytest.raises(TypeError, match="Unknown argument z"):
        ex.forward(z=mx.nd.ones(2))
    with pytest.raises(ValueError, match="Shape not match"):
        ex.forward(a=mx.nd.ones(3))
    # no args_grad: backward does nothing (as in MXNet)
    ex.backward(mx.nd.ones(2))
    assert ex.grad_arrays == [None, None]


def test_bind_argument_errors():
    sym = mx.sym.var("a") * mx.sym.var("b")
    with pytest.raises(ValueError, match="key `b` is missing"):
        sym.bind(mx.cpu(), {"a": mx.nd.ones(2)})
    with pytest.raises(ValueError, match="Length of args"):
        sym.bind(mx.cpu(), [mx.nd.ones(2)])
    with pytest.raises(mx.MXNetError, match="grad_req"):
        sym.bind(mx.cpu(), [mx.nd.ones(2)] * 2, grad_req="sometimes")


def test_grad_req_add_and_null():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    sym = a * b + a
    av, bv = np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)
    ex = sym.bind(
        mx.cpu(),
        [mx.nd.array(av), mx.nd.array(bv)],
        args_grad=[mx.nd.ones(2), mx.nd.ones(2)],
        grad_req={"a": "add", "b": "null"},
    )
    ex.forward(is_train=True)
    ex.backward([mx.nd.ones(2)])
    # d/da (a*b + a) = b + 1, added to the initial ones; b untouched (null)
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), 1 + bv + 1)
    np.testing.assert_array_equal(ex.grad_dict["b"].asnumpy(), [1, 1])
    ex.forward(is_train=True)
    ex.backward([mx.nd.ones(2) * 2])
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), 1 + 3 * (bv + 1))
    # list form and write
    ex2 = sym.bind(
        mx.cpu(),
        [mx.nd.array(av), mx.nd.array(bv)],
        args_grad=[mx.nd.ones(2), mx.nd.ones(2)],
        grad_req=["null", "write"],
    )
    ex2.forward(is_train=True)
    ex2.backward(mx.nd.ones(2) * 3)
    np.testing.assert_array_equal(ex2.grad_dict["a"].asnumpy(), [1, 1])
    np.testing.assert_array_equal(ex2.grad_dict["b"].asnumpy(), 3 * av)


def test_backward_needs_out_grads_for_non_loss_outputs():
    a = mx.sym.var("a")
    ex = (a * 2).simple_bind(mx.cpu(), a=(2,))
    ex.forward(is_train=True)
    with pytest.raises(mx.MXNetError, match="out_grads"):
        ex.backward()
    ex.backward({ex._output_names[0]: mx.nd.array([1.0, 3.0])})
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), [2, 6])
    # MakeLoss / BlockGrad outputs need no head gradient (MXNet: same)
    ex = mx.sym.Group([mx.sym.MakeLoss(a * 2), mx.sym.BlockGrad(a * 3)]).simple_bind(
        mx.cpu(), a=(2,)
    )
    ex.forward(is_train=True)
    ex.backward()
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), [2, 2])


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_softmax_output_backward_without_out_grads():
    data = mx.sym.var("data")
    sym = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="sm")
    ex = sym.simple_bind(mx.cpu(), data=(4, 5))
    assert ex.arg_dict["sm_label"].shape == (4,)
    x, w = RNG.randn(4, 5).astype(np.float32), RNG.randn(3, 5).astype(np.float32)
    lab = np.array([0, 2, 1, 2])
    ex.copy_params_from({"fc_weight": mx.nd.array(w), "fc_bias": mx.nd.zeros(3)})
    ex.forward(is_train=True, data=mx.nd.array(x), sm_label=mx.nd.array(lab))
    p = _softmax(x.astype(np.float64) @ w.T)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), p, rtol=1e-5, atol=1e-6)
    ex.backward()
    dz = p - np.eye(3)[lab]
    np.testing.assert_allclose(ex.grad_dict["fc_weight"].asnumpy(), dz.T @ x, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ex.grad_dict["fc_bias"].asnumpy(), dz.sum(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), dz @ w, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(ex.grad_dict["sm_label"].asnumpy(), np.zeros(4))


def test_simple_bind_allocates_zeros_with_inferred_shapes_and_types():
    data = mx.sym.var("data")
    sym = mx.sym.SoftmaxOutput(
        mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="bn"),
        name="softmax",
    )
    ex = sym.simple_bind(mx.cpu(), data=(4, 5), unused=(9,))  # unknown names ignored (MXNet)
    shapes = {k: v.shape for k, v in ex.arg_dict.items()}
    assert shapes == {
        "data": (4, 5),
        "fc_weight": (3, 5),
        "fc_bias": (3,),
        "bn_gamma": (3,),
        "bn_beta": (3,),
        "softmax_label": (4,),
    }
    assert {k: v.shape for k, v in ex.aux_dict.items()} == {
        "bn_moving_mean": (3,),
        "bn_moving_var": (3,),
    }
    assert all(v.dtype == np.float32 and not v.asnumpy().any() for v in ex.arg_arrays)
    assert {k for k, v in ex.grad_dict.items() if v is not None} == set(shapes)
    ex16 = (mx.sym.var("a") * 2).simple_bind(
        mx.cpu(), a=(2,), type_dict={"a": "float16"}, grad_req="null"
    )
    assert ex16.arg_dict["a"].dtype == np.float16 and ex16.outputs[0].dtype == np.float16
    assert ex16.grad_arrays == [None] and ex16.grad_dict == {"a": None}
    with pytest.raises(mx.MXNetError, match="cannot infer"):
        sym.simple_bind(mx.cpu())


def test_batchnorm_aux_states_update_only_in_training_backward():
    data = mx.sym.var("data")
    sym = mx.sym.BatchNorm(data, name="bn", momentum=0.9, fix_gamma=False)
    ex = sym.simple_bind(mx.cpu(), data=(6, 3))
    x = RNG.randn(6, 3).astype(np.float32)
    ex.arg_dict["bn_gamma"][:] = 1
    ex.aux_dict["bn_moving_var"][:] = 1
    ex.forward(is_train=False, data=mx.nd.array(x))
    np.testing.assert_array_equal(ex.aux_dict["bn_moving_mean"].asnumpy(), np.zeros(3))
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), x / np.sqrt(1 + 1e-3), rtol=1e-5)
    ex.forward(is_train=True)
    # MXNet 1.x moves the statistics in BatchNorm's backward, not in the forward
    np.testing.assert_array_equal(ex.aux_dict["bn_moving_mean"].asnumpy(), np.zeros(3))
    np.testing.assert_array_equal(ex.aux_dict["bn_moving_var"].asnumpy(), np.ones(3))
    ex.backward(mx.nd.ones((6, 3)))
    mean, var = x.mean(0), x.var(0)  # biased variance, as MXNet 1.9.1 stores it
    np.testing.assert_allclose(ex.aux_dict["bn_moving_mean"].asnumpy(), 0.1 * mean, rtol=1e-5)
    np.testing.assert_allclose(ex.aux_dict["bn_moving_var"].asnumpy(), 0.9 + 0.1 * var, rtol=1e-5)
    np.testing.assert_allclose(
        ex.outputs[0].asnumpy(), (x - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5
    )


def test_dropout_backward_reuses_the_forward_mask():
    x = mx.sym.var("x")
    ex = mx.sym.Dropout(x, p=0.5).simple_bind(mx.cpu(), x=(50,))
    xv = RNG.rand(50).astype(np.float32) + 1
    ex.forward(is_train=True, x=mx.nd.array(xv))
    out = ex.outputs[0].asnumpy()
    ex.backward(mx.nd.ones(50))
    g = ex.grad_dict["x"].asnumpy()
    assert 0 < (out == 0).sum() < 50
    np.testing.assert_allclose(g * xv, out, rtol=1e-6)


def test_reshape_shares_parameters():
    data = mx.sym.var("data")
    sym = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="sm")
    ex = sym.simple_bind(mx.cpu(), data=(4, 5))
    # softmax label is not named: its shape change needs partial_shaping (MXNet: same)
    with pytest.raises(mx.MXNetError, match="partial_shaping"):
        ex.reshape(data=(2, 5))
    small = ex.reshape(partial_shaping=True, data=(2, 5))
    assert small.arg_dict["data"].shape == (2, 5) and small.arg_dict["sm_label"].shape == (2,)
    assert small.arg_dict["fc_weight"] is ex.arg_dict["fc_weight"]
    assert small.grad_dict["fc_weight"] is ex.grad_dict["fc_weight"]
    with pytest.raises(mx.MXNetError, match="allow_up_sizing"):
        ex.reshape(partial_shaping=True, data=(8, 5))
    big = ex.reshape(partial_shaping=True, allow_up_sizing=True, data=(8, 5))
    w = RNG.randn(3, 5).astype(np.float32)
    ex.arg_dict["fc_weight"][:] = w
    x = RNG.randn(8, 5).astype(np.float32)
    out = big.forward(data=mx.nd.array(x))[0].asnumpy()
    np.testing.assert_allclose(out, _softmax(x @ w.T), rtol=1e-5, atol=1e-6)
    with pytest.raises(mx.MXNetError, match="larger"):
        ex.reshape(partial_shaping=True, data=(4, 6))  # fc_weight would grow


def test_copy_params_from():
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    ex = sym.simple_bind(mx.cpu(), data=(1, 3))
    w = RNG.randn(2, 3).astype(np.float32)
    ex.copy_params_from({"fc_weight": mx.nd.array(w), "fc_bias": mx.nd.array([1, 2])})
    np.testing.assert_array_equal(ex.arg_dict["fc_weight"].asnumpy(), w)
    with pytest.raises(ValueError, match='"zz"'):
        ex.copy_params_from({"zz": mx.nd.ones(1)})
    ex.copy_params_from({"zz": mx.nd.ones(1)}, allow_extra_params=True)
    with pytest.raises(mx.MXNetError, match="shape"):
        ex.copy_params_from({"fc_weight": mx.nd.ones((2, 4))})
    out = ex.forward(data=mx.nd.array([[1, 0, 1]]))[0].asnumpy()
    np.testing.assert_allclose(out, [[w[0, 0] + w[0, 2] + 1, w[1, 0] + w[1, 2] + 2]], rtol=1e-6)


def test_eval_and_shared_exec():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    res = (a * b + a).eval(ctx=mx.cpu(), a=mx.nd.array([1, 2]), b=mx.nd.array([3, 4]))
    assert isinstance(res, list)
    np.testing.assert_array_equal(res[0].asnumpy(), [4, 10])
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    ex1 = sym.simple_bind(mx.cpu(), data=(4, 3))
    ex2 = sym.simple_bind(
        mx.cpu(), data=(2, 3), shared_exec=ex1, shared_arg_names=["fc_weight", "fc_bias"]
    )
    assert ex2.arg_dict["fc_weight"] is ex1.arg_dict["fc_weight"]
    assert ex2.arg_dict["data"] is not ex1.arg_dict["data"]


def test_monitor_and_debug_str():
    a = mx.sym.var("a")
    sym = mx.sym.exp(mx.sym._mul_scalar(a, scalar=2, name="m"), name="e")
    ex = sym.simple_bind(mx.cpu(), a=(2,))
    seen = {}
    ex.set_monitor_callback(lambda name, arr: seen.__setitem__(name, arr.asnumpy()))
    ex.forward(a=mx.nd.array([0.0, 1.0]))
    np.testing.assert_allclose(seen["e_output"], np.exp([0.0, 2.0]), rtol=1e-6)
    np.testing.assert_allclose(seen["m_output"], [0.0, 2.0])
    text = ex.debug_str()
    assert "Op:exp, Name=e" in text and "Variable:a" in text


def test_embedding_in_a_bound_graph_clips_as_mxnet():
    """MXNet's bucketing iterators pad sentences with -1, and MXNet's Embedding in a
    bound graph reads index -1 as row 0 (clip); eager calls still raise (the catalogue)."""
    data = mx.sym.var("data")
    emb = mx.sym.Embedding(data, input_dim=4, output_dim=2, name="embed")
    w = np.arange(8, dtype=np.float32).reshape(4, 2)
    ex = emb.bind(mx.cpu(), {"data": mx.nd.array([[1, -1, 7]]), "embed_weight": mx.nd.array(w)})
    out = ex.forward()[0].asnumpy()
    np.testing.assert_array_equal(out[0], w[[1, 0, 3]])
