"""Each converter against ONNX Runtime: gluonjax's eager op is the reference (ORT's
kernels are independent code), at opsets 12, 13 and the newest onnx knows."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_common import OPSETS, check_case, export_op, run_ort

import gluonjax as mx

R = np.random.RandomState(0)


def _x(*shape, lo=-2.0, hi=2.0, dtype="float32"):
    return mx.nd.array(R.uniform(lo, hi, size=shape), dtype=dtype)


X = _x(2, 3, 5, 5)
V = _x(3, 4)
POS = _x(3, 4, lo=0.1, hi=3.0)
W = _x(4, 3, 3, 3)
B = _x(4)

CASES = {
    "Convolution": (
        lambda F, x, w, b: F.Convolution(
            x, w, b, kernel=(3, 3), num_filter=4, pad=(1, 1), stride=(2, 1), dilate=(1, 2)
        ),
        [X, W, B],
    ),
    "Convolution_group_nobias": (
        lambda F, x, w: F.Convolution(x, w, kernel=(1, 1), num_filter=3, num_group=3, no_bias=True),
        [X, _x(3, 1, 1, 1)],
    ),
    "Convolution1D": (
        lambda F, x, w: F.Convolution(x, w, kernel=(3,), num_filter=2, no_bias=True, pad=(1,)),
        [_x(2, 3, 7), _x(2, 3, 3)],
    ),
    "Deconvolution": (
        lambda F, x, w: F.Deconvolution(
            x, w, kernel=(3, 3), num_filter=2, stride=(2, 2), pad=(1, 1), adj=(1, 1)
        ),
        [X, _x(3, 2, 3, 3)],
    ),
    "FullyConnected": (
        lambda F, x, w, b: F.FullyConnected(x, w, b, num_hidden=4),
        [X, _x(4, 75), B],
    ),
    "FullyConnected_noflatten": (
        lambda F, x, w: F.FullyConnected(x, w, num_hidden=2, no_bias=True, flatten=False),
        [X, _x(2, 5)],
    ),
    "relu": (lambda F, x: F.relu(x), [X]),
    "Activation": (
        lambda F, x: [
            F.Activation(x, act_type=t)
            for t in ("relu", "sigmoid", "tanh", "softrelu", "softsign", "log_sigmoid", "mish")
        ],
        [X],
    ),
    "LeakyReLU": (
        lambda F, x: [
            F.LeakyReLU(x, act_type=t, slope=0.3) for t in ("leaky", "elu", "selu", "gelu")
        ],
        [X],
    ),
    "LeakyReLU_prelu": (lambda F, x, g: F.LeakyReLU(x, g, act_type="prelu"), [X, _x(3)]),
    "BatchNorm": (
        lambda F, x, g, b, m, v: [
            F.BatchNorm(x, g, b, m, v, fix_gamma=False, eps=1e-3),
            F.BatchNorm(x, g, b, m, v, fix_gamma=True),
        ],
        [X, _x(3), _x(3), _x(3), _x(3, lo=0.5, hi=2.0)],
    ),
    "Pooling_full_padded": (
        lambda F, x: [
            F.Pooling(
                x,
                kernel=(3, 3),
                stride=(2, 2),
                pad=(1, 1),
                pool_type="avg",
                pooling_convention="full",
            ),
            F.Pooling(
                x,
                kernel=(3, 3),
                stride=(2, 2),
                pad=(1, 1),
                pool_type="sum",
                pooling_convention="full",
            ),
            F.Pooling(x, kernel=(2, 2), pool_type="sum"),
            F.Pooling(x, global_pool=True, pool_type="sum"),
            F.Pooling(x, kernel=(3, 3), pad=(1, 1), pool_type="lp", p_value=2),
        ],
        [_x(1, 2, 6, 6)],
    ),
    "Pooling": (
        lambda F, x: [
            F.Pooling(x, kernel=(2, 2), pool_type="max"),
            F.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max", pooling_convention="full"),
            F.Pooling(x, kernel=(3, 3), pad=(1, 1), pool_type="avg"),
            F.Pooling(x, kernel=(3, 3), pad=(1, 1), pool_type="avg", count_include_pad=False),
            F.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="avg", pooling_convention="full"),
            F.Pooling(x, global_pool=True, pool_type="avg"),
            F.Pooling(x, global_pool=True, pool_type="max"),
        ],
        [X],
    ),
    "Flatten_Concat": (lambda F, x, y: F.Concat(F.Flatten(x), y, dim=1), [X, _x(2, 4)]),
    "binary": (
        lambda F, a, b: [
            a + b,
            a - b,
            a * b,
            a / b,
            F.broadcast_add(a, F.slice_axis(b, axis=0, begin=0, end=1)),
            F.broadcast_mul(a, F.slice_axis(b, axis=0, begin=0, end=1)),
            F.broadcast_sub(a, b),
            F.broadcast_div(a, b),
            F.broadcast_maximum(a, b),
            F.broadcast_minimum(a, b),
            F.elemwise_add(a, b),
            F.broadcast_greater(a, b),
            F.broadcast_equal(a, a),
        ],
        [V, POS],
    ),
    "scalar": (
        lambda F, a: [
            a + 2,
            a - 2,
            2 - a,
            a * 3,
            a / 4,
            4 / a,
            a**2,
            2**a,
            F.maximum(a, 1),
            F.minimum(a, 1),
            a > 0.5,
            a <= 1,
        ],
        [POS],
    ),
    "Dropout": (lambda F, x: F.Dropout(x, p=0.5), [X]),
    "softmax": (
        lambda F, x: [
            F.softmax(x),
            F.softmax(x, axis=1),
            F.log_softmax(x, axis=0),
            F.softmax(x, temperature=2.0),
        ],
        [_x(2, 3, 4)],
    ),
    "SoftmaxOutput": (
        lambda F, x, label: F.SoftmaxOutput(x, label),
        [_x(3, 2, 2), mx.nd.array([0, 1, 2])],
    ),
    "SoftmaxOutput_multi": (
        lambda F, x, label: F.SoftmaxOutput(x, label, multi_output=True),
        [_x(3, 2, 2), mx.nd.zeros((3, 2))],
    ),
    "Reshape": (
        lambda F, x: [
            F.reshape(x, shape=(0, -1)),
            F.reshape(x, shape=(-1, 5)),
            F.reshape(x, shape=(-3, -2)),
            F.reshape(x, shape=(0, -4, 1, 3, 0, 0)),
            F.reshape(x, shape=(-2, 1)),
        ],
        [X],
    ),
    "transpose": (lambda F, x: [F.transpose(x), F.transpose(x, axes=(0, 2, 3, 1))], [X]),
    "clip_Cast": (lambda F, x: [F.clip(x, -1, 0.5), F.Cast(x, dtype="int32")], [X]),
    "reduce": (
        lambda F, x: [
            F.mean(x, axis=1),
            F.sum(x, axis=(1, 2), keepdims=True),
            F.max(x),
            F.min(x, axis=-1),
            F.sum(x, axis=1, exclude=True),
            F.prod(x, axis=0),
        ],
        [_x(2, 3, 4, lo=0.5, hi=1.5)],
    ),
    "slice_axis_expand_squeeze": (
        lambda F, x: [
            F.slice_axis(x, axis=1, begin=1, end=None),
            F.slice_axis(x, axis=-1, begin=0, end=-2),
            F.expand_dims(x, axis=1),
            F.squeeze(F.expand_dims(x, axis=2), axis=2),
            F.slice(x, begin=(None, 1), end=(2, None), step=(1, 2)),
        ],
        [X],
    ),
    "unary": (
        lambda F, x: [
            F.exp(x),
            F.log(F.abs(x) + 1),
            F.sqrt(F.abs(x)),
            F.abs(x),
            F.negative(x),
            F.identity(x),
            F.square(x),
            F.sin(x),
            F.floor(x),
            F.ceil(x),
            F.round(x),
            F.erf(x),
            F.BlockGrad(x),
            F.reciprocal(F.abs(x) + 1),
            F.sign(x),
        ],
        [_x(3, 4, lo=-3.0, hi=3.0)],
    ),
    "add_n_stack_split": (
        lambda F, a, b: [
            F.add_n(a, b, a),
            F.stack(a, b, axis=1),
            *F.split(a, num_outputs=2, axis=1),
            *F.split(a, num_outputs=4, axis=1, squeeze_axis=True),
        ],
        [V, V * 2],
    ),
    "logic": (
        lambda F, a, b: [
            F.broadcast_logical_and(a, b),
            F.broadcast_logical_or(a, b),
            F.broadcast_logical_xor(a, b),
            F.logical_not(a),
            F._internal._logical_and_scalar(a, scalar=1),
        ],
        [mx.nd.array([[0, 1, 2], [1, 0, 0]]), mx.nd.array([[1, 1, 0], [0, 0, 3]])],
    ),
    "hard_sigmoid_log2_log10": (
        lambda F, x: [F.hard_sigmoid(x), F.log2(F.abs(x) + 1), F.log10(F.abs(x) + 1)],
        [X],
    ),
    "broadcast_tile_where": (
        lambda F, x, y: [
            F.broadcast_to(F.slice_axis(x, axis=0, begin=0, end=1), shape=(3, 4)),
            F.broadcast_like(F.slice_axis(x, axis=1, begin=0, end=1), y),
            F.tile(x, reps=(2, 1)),
            F.tile(x, reps=(2, 1, 2)),
            F.tile(x, reps=(3,)),
            F.where(x > 0, x, y),
        ],
        [V, POS],
    ),
    "dot": (
        lambda F, a, b, c, d: [
            F.dot(a, b),
            F.dot(a, a, transpose_b=True),
            F.dot(b, b, transpose_a=True),
            F.batch_dot(c, d),
            F.batch_dot(c, c, transpose_b=True),
            F.dot(c, b),
        ],
        [V, _x(4, 2), _x(2, 3, 4), _x(2, 4, 5)],
    ),
    # graph inputs are in graph order (as in MXNet): here the indices come first
    "indexing": (
        lambda F, i, w, j: [
            F.Embedding(i, w, input_dim=3, output_dim=4),
            F.take(w, j),
            F.take(w, j, axis=1, mode="wrap"),
            F.one_hot(j, depth=5),
            F.argmax(w, axis=1),
            F.argmin(w),
            F.shape_array(w),
            F.size_array(w),
            F.SwapAxis(w, dim1=0, dim2=1),
            F.reverse(w, axis=(0, 1)),
        ],
        [mx.nd.array([[0, 2], [1, 0]]), V, mx.nd.array([[0, 2], [4, -1]])],
    ),
    "creation_norm_pad": (
        lambda F, x: [
            F.zeros((2, 3)),
            F.ones((1, 2), dtype="int32"),
            F.full((2,), 3.5),
            F.norm(x),
            F.norm(x, ord=1, axis=1, keepdims=True),
            F.pad(x, mode="constant", pad_width=(0, 0, 0, 0, 1, 2, 2, 1), constant_value=0.5),
            F.pad(x, mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 1, 1)),
            F.pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 1, 1)),
        ],
        [X],
    ),
    "normalization": (
        lambda F, x, g, b: [
            F.L2Normalization(x),
            F.L2Normalization(x, mode="channel"),
            F.L2Normalization(x, mode="spatial"),
            F.InstanceNorm(x, g, b),
            F.LayerNorm(x, F.ones((5,)), F.zeros((5,))),
            F.LayerNorm(x, g, b, axis=1),
        ],
        [X, _x(3), _x(3)],
    ),
    "regression_outputs": (
        lambda F, x, label: [
            F.LogisticRegressionOutput(x, label),
            F.LinearRegressionOutput(x, label),
        ],
        [V, mx.nd.zeros((3, 4))],
    ),
    "depth_space_upsampling": (
        lambda F, x: [
            F.depth_to_space(x, block_size=2),
            F.space_to_depth(x, block_size=2),
            F.UpSampling(x, scale=2, sample_type="nearest"),
        ],
        [_x(1, 4, 2, 4)],
    ),
    "sort_topk": (
        lambda F, x: [
            F.topk(x, k=2),
            F.topk(x, k=2, ret_typ="value", axis=0),
            *F.topk(x, k=3, ret_typ="both", is_ascend=True),
            F.topk(x, axis=None, k=4),
            F.argsort(x),
            F.argsort(x, axis=0, is_ascend=False, dtype="int32"),
            F.sort(x, axis=1),
        ],
        [mx.nd.array(R.permutation(20).reshape(4, 5).astype("float32"))],
    ),
    "repeat_like_axis": (
        lambda F, x, y: [
            F.repeat(x, repeats=2),
            F.repeat(x, repeats=3, axis=1),
            F.reshape_like(x, y),
            F.slice_like(x, F.ones((2, 3))),
            F.broadcast_axis(F.slice_axis(x, axis=1, begin=0, end=1), axis=1, size=3),
        ],
        [V, _x(4, 3)],
    ),
    "split_v2_gemm2_arange": (
        lambda F, x, b: [
            *F.split_v2(x, indices_or_sections=(1, 3), axis=1),
            *F.split_v2(x, indices_or_sections=3, axis=0, squeeze_axis=True),
            *F.split_v2(x, indices_or_sections=(0, 2), axis=1),
            F.linalg.gemm2(x, b, alpha=2.0),
            F.linalg.gemm2(x, x, transpose_b=True),
            F.contrib.arange_like(x, start=1.0, step=0.5),
            F.arange(0, 6, step=2, repeat=2),
        ],
        [V, _x(4, 2)],
    ),
    "gather_nd_mod_mask": (
        lambda F, x, i, n: [
            F.gather_nd(x, i),
            F.broadcast_mod(x, F.ones_like(x) * -1.5),
            x % 1.5,
            F._internal._rmod_scalar(x, scalar=2.0),
            F.SequenceMask(x, n, use_sequence_length=True, value=-7.0),
            F.SequenceMask(x, n, use_sequence_length=True, axis=1),
            F.contrib.div_sqrt_dim(x),
        ],
        [
            _x(3, 3, 2, lo=-3.0, hi=3.0),
            mx.nd.array([[0, 2, -1], [1, 0, 2]]),
            mx.nd.array([1, 3, 2]),
        ],
    ),
    "getitem": (
        lambda F, x: [
            x[1:2],
            x[:, ::-1],
            x[0],
            x[-1, 1:, None],
            x[..., 2],
            x[::2, 1:4:2][None],
            x[1, 2, 3, 4],
        ],
        [X],
    ),
    "Deconvolution_target_bias": (
        lambda F, x, w, b: [
            F.Deconvolution(x, w, kernel=(3, 3), num_filter=2, stride=(2, 2), target_shape=(10, 9)),
            F.Deconvolution(x, w, b, kernel=(3, 3), num_filter=2, no_bias=False, dilate=(2, 1)),
        ],
        [X, _x(3, 2, 3, 3), _x(2)],
    ),
    "harness_fixes": (
        lambda F, c, x, y, i, w, a, b: [
            F.where(c, x, y),
            F.Embedding(i, w, input_dim=3, output_dim=2),
            F.broadcast_mod(a, b),
            F.batch_dot(F.Cast(x, dtype="float64"), F.Cast(y, dtype="float64"), transpose_b=True),
            F.batch_dot(F.Cast(x, dtype="float64"), F.Cast(y, dtype="float64"), transpose_a=True),
            F.linalg.gemm2(
                F.Cast(x, dtype="float64"), F.Cast(y, dtype="float64"), transpose_b=True, alpha=0.5
            ),
        ],
        [
            mx.nd.array([1, 0]),
            _x(2, 3, 3),
            _x(2, 3, 3),
            mx.nd.array([[0, 2]]),
            mx.nd.array([[1, 2], [3, 4], [5, 6]], dtype="int32"),
            mx.nd.array([7, -7, 5, 0], dtype="int32"),
            mx.nd.array([3, 3, 0, 2], dtype="int32"),
        ],
    ),
    "softmax_use_length": (
        lambda F, x, n0, n2: [
            F.softmax(x, n0, use_length=True, axis=0),
            F.softmax(x, n2, use_length=True, axis=-1, temperature=2.0),
            F.log_softmax(x, n2, use_length=True, axis=-1),
        ],
        [
            _x(2, 3, 4),
            mx.nd.array([[1, 2, 0, 1], [2, 2, 1, 1], [0, 1, 2, 2]], dtype="int32"),
            mx.nd.array([[1, 4, 2], [3, 0, 4]], dtype="int32"),
        ],
    ),
    "sequence_mask": (
        lambda F, x, n0, n1: [
            F.SequenceMask(x, n0, use_sequence_length=True, value=-2.0),
            F.SequenceMask(x, n1, use_sequence_length=True, axis=1),
        ],
        [_x(4, 3, 2), mx.nd.array([1, 4, 2]), mx.nd.array([0, 3, 1, 2])],
    ),
    "resize_adaptive_pool": (
        lambda F, x: [
            F.contrib.BilinearResize2D(x, height=7, width=13),
            F.contrib.BilinearResize2D(x, height=2, width=3),
            F.contrib.BilinearResize2D(x, scale_height=1.7, scale_width=0.6),
            F.contrib.BilinearResize2D(x, height=9, width=4, align_corners=False),
            F.contrib.BilinearResize2D(x, height=5, width=5),
            F.contrib.AdaptiveAvgPooling2D(x, output_size=1),
            F.contrib.AdaptiveAvgPooling2D(x, output_size=(3, 2)),
            F.contrib.AdaptiveAvgPooling2D(x, output_size=(2, 5)),
            F.contrib.AdaptiveAvgPooling2D(x, output_size=(5, 5)),
        ],
        [_x(2, 3, 5, 10)],
    ),
    "interleaved_attention": (
        lambda F, qkv, att, q, kv, att2: [
            F.contrib.interleaved_matmul_selfatt_qk(qkv, heads=2),
            F.contrib.interleaved_matmul_selfatt_valatt(qkv, att, heads=2),
            F.contrib.interleaved_matmul_encdec_qk(q, kv, heads=2),
            F.contrib.interleaved_matmul_encdec_valatt(kv, att2, heads=2),
        ],
        [_x(4, 3, 2 * 3 * 5), _x(6, 4, 4), _x(2, 3, 2 * 5), _x(4, 3, 2 * 2 * 5), _x(6, 2, 4)],
    ),
    "ROIPooling": (
        lambda F, x, rois: F.ROIPooling(x, rois, pooled_size=(2, 3), spatial_scale=0.7),
        [
            mx.nd.array(R.permutation(2 * 3 * 8 * 6).reshape(2, 3, 8, 6).astype("float32")),
            mx.nd.array([[0, 0, 0, 4, 4], [1, 1.2, 0.5, 7.9, 6.1], [0, 2, 3, 2, 3]]),
        ],
    ),
    "Crop": (
        lambda F, x, like: [
            F.Crop(x, h_w=(3, 4), offset=(2, 1)),
            F.Crop(x, like, offset=(1, 3)),
            F.Crop(x, like, center_crop=True),
        ],
        [_x(2, 3, 6, 8), _x(1, 1, 4, 2)],
    ),
}


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_op_matches_onnxruntime(case, opset, tmp_path):
    fn, inputs = CASES[case]
    check_case(tmp_path, fn, inputs, opset, case)


def test_every_case_op_has_a_converter():
    support = set(mx.onnx.get_operator_support())
    for name in (
        "Convolution",
        "Deconvolution",
        "FullyConnected",
        "Activation",
        "LeakyReLU",
        "BatchNorm",
        "Pooling",
        "Flatten",
        "flatten",
        "Concat",
        "concat",
        "elemwise_add",
        "_plus",
        "broadcast_add",
        "_plus_scalar",
        "Dropout",
        "softmax",
        "log_softmax",
        "SoftmaxOutput",
        "Reshape",
        "reshape",
        "transpose",
        "clip",
        "Cast",
        "mean",
        "sum",
        "sum_axis",
        "max",
        "min",
        "slice_axis",
        "expand_dims",
        "squeeze",
        "_copy",
        "identity",
        "exp",
        "log",
        "sqrt",
        "abs",
        "negative",
    ):
        assert name in support, name


@pytest.mark.parametrize("opset", OPSETS)
def test_random_ops_export_as_onnx_draws(opset, tmp_path):
    """ONNX Runtime draws with its own generator: shapes, dtypes and the distributions
    agree with gluonjax's draws (moments of 20,000 draws; one-hot rows of multinomial)."""
    n = 20000
    probs = np.array([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]], np.float32)

    def fn(F, x, p):
        return [
            F.random_uniform(low=-2.0, high=4.0, shape=(n,)),
            F.random_normal(loc=1.5, scale=2.0, shape=(2, n // 2), dtype="float64"),
            F.random.uniform_like(x, low=3.0, high=5.0),
            F.random.normal_like(x, loc=-1.0, scale=0.5),
            F.sample_multinomial(p, shape=n),
            F.sample_multinomial(p),
            x,
        ]

    x = mx.nd.zeros((4, n // 4), dtype="float16")
    ours, got = export_op(tmp_path, fn, [x, mx.nd.array(probs)], opset=opset, name="rand")
    for g, w in zip(got, ours):
        assert g.shape == w.shape and g.dtype == w.dtype
    uni, nrm, uni_like, nrm_like, multi, one = got[:6]
    assert uni.min() >= -2.0 and uni.max() < 4.0 and abs(uni.mean() - 1.0) < 0.1
    assert abs(nrm.mean() - 1.5) < 0.1 and abs(nrm.std() - 2.0) < 0.1
    assert uni_like.min() >= 3.0 and uni_like.max() <= 5.0
    assert abs(uni_like.astype(np.float64).mean() - 4.0) < 0.05
    assert abs(nrm_like.astype(np.float64).mean() + 1.0) < 0.05
    assert (multi[0] == 1).all() and one[0] == 1
    freq = np.bincount(multi[1], minlength=3) / n
    np.testing.assert_allclose(freq, probs[1], atol=0.02)
    for mine, theirs in zip(ours[:4], got[:4]):  # gluonjax's draws follow the same laws
        mine, theirs = mine.astype(np.float64), theirs.astype(np.float64)
        assert abs(mine.mean() - theirs.mean()) < 0.1 and abs(mine.std() - theirs.std()) < 0.1


def test_softmax_output_label_inputs_as_mxnet(tmp_path):
    # MXNet 1.9.1's exporter drops only the label variable named '<last node>_label' (the
    # one SoftmaxOutput creates); a label given as an input of its own stays an input
    from onnx_common import onnx

    data = mx.sym.var("data")
    auto = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3), name="softmax")
    assert auto.list_arguments()[-1] == "softmax_label"
    params = {
        n: mx.nd.ones(s) for n, s in zip(auto.list_arguments(), auto.infer_shape(data=(2, 4))[0])
    }
    params = {k: v for k, v in params.items() if k not in ("data", "softmax_label")}
    path = mx.onnx.export_model(auto, params, [(2, 4), (2,)], np.float32, str(tmp_path / "a.onnx"))
    assert [i.name for i in onnx.load(path).graph.input] == ["data"]
    own = mx.sym.SoftmaxOutput(data, mx.sym.var("lab"), name="softmax")
    path = mx.onnx.export_model(own, {}, [(2, 4), (2,)], np.float32, str(tmp_path / "b.onnx"))
    assert [i.name for i in onnx.load(path).graph.input] == ["data", "lab"]
    x = _x(2, 4).asnumpy()
    (got,) = run_ort(path, {"data": x, "lab": np.zeros(2, np.float32)})
    np.testing.assert_allclose(got, np.exp(x) / np.exp(x).sum(1, keepdims=True), rtol=1e-5)
