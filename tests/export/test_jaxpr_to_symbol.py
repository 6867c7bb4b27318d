"""jaxpr -> symbol graph: registry nodes, jax.* nodes, reload from JSON and run."""

from __future__ import annotations

import json

import export_nets as nets
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gluonjax as mx
from gluonjax.gluon._export import ExportError, block_symbol
from gluonjax.gluon._export.jaxpr_to_symbol import jaxpr_to_symbol
from gluonjax.symbol import _json
from gluonjax.symbol._eval import graph_function


def _run(symbol, arrays, inputs):
    args = {k.split(":", 1)[1]: v for k, v in arrays.items() if k.startswith("arg:")}
    aux = {k.split(":", 1)[1]: v for k, v in arrays.items() if k.startswith("aux:")}
    args.update(inputs)
    outs, _ = graph_function(symbol)(args, aux)
    return [np.asarray(o) for o in outs]


def _ops(symbol):
    return [n["op"] for n in json.loads(symbol.tojson())["nodes"] if n["op"] != "null"]


EXPECTED_OPS = {
    "mlp": ["FullyConnected", "Activation", "FullyConnected", "Activation", "FullyConnected"],
    "convnet": [
        "Convolution",
        "BatchNorm",
        "Activation",
        "Pooling",
        "Flatten",
        "Dropout",
        "FullyConnected",
    ],
}


@pytest.mark.parametrize("name", sorted(nets.NETS))
@pytest.mark.parametrize("hybridize", [False, True])
def test_registry_graph_reloads_and_matches_numpy(name, hybridize):
    make, ref, shape = nets.NETS[name]
    net = make()
    if hybridize:
        net.hybridize()
    x = mx.nd.random.normal(shape=shape)
    symbol, arrays, _ = block_symbol(net, [x])
    if name in EXPECTED_OPS:
        assert _ops(symbol) == EXPECTED_OPS[name]
    assert not any(op.startswith("jax.") for op in _ops(symbol))
    params = net._collect_params_with_prefix()
    assert set(symbol.list_arguments()) == {"data"} | {k for k in params if "running" not in k}
    assert set(symbol.list_auxiliary_states()) == {k for k in params if "running" in k}
    loaded = _json.load_json(symbol.tojson())
    out = _run(loaded, arrays, {"data": x._data})
    np.testing.assert_allclose(out[0], ref(net, x.asnumpy()), rtol=1e-5, atol=1e-5)


def test_attributes_written_like_mxnet():
    net = nets.mixer()
    symbol, _, _ = block_symbol(net, [mx.nd.ones((2, 4))])
    nodes = {n["op"]: n.get("attrs", {}) for n in json.loads(symbol.tojson())["nodes"]}
    assert nodes["FullyConnected"] == {"num_hidden": "5"}  # defaults left out
    assert nodes["Concat"] == {"num_args": "2"}  # required kept, dim=1 is the default
    assert nodes["clip"] == {"a_max": "0.5", "a_min": "-0.5"}
    assert nodes["_mul_scalar"] == {"scalar": "2.0"}  # dynamic attribute from the trace
    assert nodes["_plus_scalar"] == {"scalar": "1.0"}


def test_gluon2_block_exports_jax_nodes():
    net = nets.jnp_block()
    net.hybridize()
    x = mx.nd.random.normal(shape=(3, 4))
    symbol, arrays, _ = block_symbol(net, [x])
    ops = _ops(symbol)
    assert ops[0] == "FullyConnected"
    assert {
        "jax.tanh",
        "jax.logistic",
        "jax.reshape",
        "jax.transpose",
        "jax.concatenate",
        "jax.select_n",
        "jax.reduce_sum",
        "jax.div",
    } <= set(ops)
    assert "arg:_const0" in arrays  # the divisor array became a saved constant
    loaded = _json.load_json(symbol.tojson())
    out = _run(loaded, arrays, {"data": x._data})
    np.testing.assert_allclose(out[0], nets.jnp_block_ref(net, x.asnumpy()), rtol=1e-5, atol=1e-5)


def _x(shape=(3, 4), seed=0):
    return np.random.RandomState(seed).uniform(0.2, 2.0, shape).astype(np.float32)


W = np.random.RandomState(1).normal(size=(4, 5)).astype(np.float32)
K = np.random.RandomState(2).normal(size=(2, 1, 2, 2)).astype(np.float32)


def _conv_ref(x):
    x4 = x.reshape(1, 1, 3, 4)
    out = np.zeros((1, 2, 2, 3), np.float64)
    for i in range(2):
        for j in range(3):
            out[0, :, i, j] = np.einsum("chw,ochw->o", x4[0, :, i : i + 2, j : j + 2], K)
    return out


PRIMS = {
    "reduce_sum_max_min": (
        lambda x: x.sum(0) + x.max(1).sum() - jnp.min(x, axis=0),
        lambda x: x.sum(0) + x.max(1).sum() - x.min(0),
    ),
    "dot_general": (lambda x: x @ W, lambda x: x @ W),
    "convert_element_type": (
        lambda x: (x * 3).astype(jnp.int32).astype(jnp.float32),
        lambda x: np.trunc(x * 3),
    ),
    "integer_pow_rsqrt_log": (
        lambda x: x**3 + jax.lax.rsqrt(x) + jnp.log(x),
        lambda x: x**3 + 1 / np.sqrt(x) + np.log(x),
    ),
    "squeeze_expand_dims": (
        lambda x: jnp.squeeze(jnp.expand_dims(x, 0), 0)[None, :, :, None],
        lambda x: x[None, :, :, None],
    ),
    "slice_and_dynamic_slice": (
        lambda x: x[:2, 1:3] + jax.lax.dynamic_slice(x, (1, 0), (2, 2)),
        lambda x: x[:2, 1:3] + x[1:3, 0:2],
    ),
    "gather_take": (lambda x: jnp.take(x, jnp.array([2, 0]), axis=1), lambda x: x[:, [2, 0]]),
    "argmax_cumsum": (
        lambda x: jnp.argmax(x, axis=0).astype(jnp.float32) + jnp.cumsum(x, 0)[-1],
        lambda x: x.argmax(0) + x.cumsum(0)[-1],
    ),
    "sort": (lambda x: jnp.sort(x, axis=1), lambda x: np.sort(x, axis=1)),
    "clamp_neg_max": (
        lambda x: jnp.clip(-x, -1.0, -0.5) + jnp.maximum(x, 1.0),
        lambda x: np.clip(-x, -1.0, -0.5) + np.maximum(x, 1.0),
    ),
    "conv": (lambda x: jax.lax.conv(x.reshape(1, 1, 3, 4), K, (1, 1), "VALID"), _conv_ref),
    "split": (lambda x: jnp.split(x, 2, axis=1)[1] * 2, lambda x: x[:, 2:] * 2),
}


@pytest.mark.parametrize("name", sorted(PRIMS))
def test_jax_primitives_round_trip_through_json(name):
    fn, ref = PRIMS[name]
    x = _x()
    closed = jax.make_jaxpr(fn)(x)
    symbol, consts = jaxpr_to_symbol(closed, ["data"])
    loaded = _json.load_json(symbol.tojson())
    out = _run(loaded, {"arg:" + k: v for k, v in consts.items()}, {"data": x})
    np.testing.assert_allclose(out[0], ref(x.astype(np.float64)), rtol=1e-5, atol=1e-5)
    # and once more compiled: the graph is one jittable function
    jitted = jax.jit(lambda a: graph_function(loaded)({"data": a, **consts}, {})[0][0])
    np.testing.assert_allclose(
        np.asarray(jitted(x)), ref(x.astype(np.float64)), rtol=1e-5, atol=1e-5
    )


def test_unsupported_primitive_is_named():
    def fn(x):
        return jax.lax.cond(x.sum() > 0, lambda v: v + 1, lambda v: v - 1, x)

    with pytest.raises(ExportError, match="'cond'"):
        jaxpr_to_symbol(jax.make_jaxpr(fn)(_x()), ["data"])


def test_unknown_jax_op_in_json_is_a_clear_error():
    text = json.dumps(
        {
            "nodes": [
                {"op": "null", "name": "data", "inputs": []},
                {"op": "jax.no_such_prim", "name": "n0", "inputs": [[0, 0, 0]]},
            ],
            "arg_nodes": [0],
            "heads": [[1, 0, 0]],
        }
    )
    with pytest.raises(mx.base.MXNetError, match="no_such_prim"):
        _json.load_json(text)
