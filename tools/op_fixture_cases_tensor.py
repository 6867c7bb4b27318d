"""More op cases (normalization, element-wise, reductions, shape and indexing ops).

Imported after ``op_fixture_cases`` so the random inputs come out in a fixed order.
"""

from __future__ import annotations

from op_fixture_cases import Aux, away, case, group, idx, ints, pos, r, u


def _bn(shape, c):
    return [r(*shape), u(0.5, 1.5, c), r(c), Aux(0.1 * r(c)), Aux(pos(c))]


# fmt: off
# ----------------------------------------------------------------------------- normalization
group("norm")
case("bn-train-fixgamma", "BatchNorm", _bn((4, 3, 2, 2), 3), train=True)
case("bn-train", "BatchNorm", _bn((4, 3, 2, 2), 3), train=True, fix_gamma=False)
case("bn-infer", "BatchNorm", _bn((4, 3, 2, 2), 3), fix_gamma=False)
case("bn-infer-fixgamma", "BatchNorm", _bn((2, 3, 2), 3), fix_gamma=True)
case("bn-train-global", "BatchNorm", _bn((4, 3, 2), 3), train=True, fix_gamma=False,
     use_global_stats=True)
case("bn-axis-last", "BatchNorm", _bn((3, 2, 4), 4), train=True, fix_gamma=False, axis=-1,
     momentum=0.8)
case("bn-2d-eps", "BatchNorm", _bn((6, 3), 3), train=True, fix_gamma=False, eps=1e-3)
case("bn-strings", "BatchNorm", _bn((3, 2, 3), 2), train=True, fix_gamma="False", momentum="0.5",
     eps="0.01", axis="1")
case("bn-output-mean-var", "BatchNorm", _bn((4, 2, 3), 2), train=True, fix_gamma=False,
     output_mean_var=True)
case("layernorm-last", "LayerNorm", [r(2, 3, 4), u(0.5, 1.5, 4), r(4)])
case("layernorm-axis1", "LayerNorm", [r(2, 3, 4), u(0.5, 1.5, 3), r(3)], axis=1, eps=1e-3)
case("layernorm-2d-strings", "LayerNorm", [r(3, 5), u(0.5, 1.5, 5), r(5)], axis="-1", eps="1e-4")
case("instancenorm-3d", "InstanceNorm", [r(2, 3, 4), u(0.5, 1.5, 3), r(3)])
case("instancenorm-4d", "InstanceNorm", [r(2, 2, 3, 3), u(0.5, 1.5, 2), r(2)], eps=1e-3)
case("groupnorm-2g", "GroupNorm", [r(2, 4, 3), u(0.5, 1.5, 2), r(2)], num_groups=2)
case("groupnorm-1g-4d", "GroupNorm", [r(2, 3, 2, 2), u(0.5, 1.5, 1), r(1)], num_groups=1)
case("groupnorm-3g-eps", "GroupNorm", [r(1, 6, 4), u(0.5, 1.5, 3), r(3)], num_groups="3",
     eps="0.001")
case("l2norm-instance", "L2Normalization", [r(2, 3, 4)])
case("l2norm-channel", "L2Normalization", [r(2, 3, 4)], mode="channel")
case("l2norm-spatial", "L2Normalization", [r(2, 3, 2, 2)], mode="spatial", eps=1e-3)
case("lrn-n3", "LRN", [r(1, 5, 3, 3)], nsize=3)
case("lrn-n5", "LRN", [r(2, 6, 2, 2)], nsize=5, alpha=0.001, beta=0.75, knorm=2.0)

# ----------------------------------------------------------------------------- element-wise
group("elemwise")
case("elemwise_add", "elemwise_add", [r(2, 3), r(2, 3)])
case("broadcast_add", "broadcast_add", [r(2, 1, 3), r(1, 4, 3)])
case("broadcast_sub", "broadcast_sub", [r(3, 1), r(1, 4)])
case("broadcast_mul", "broadcast_mul", [r(2, 3), r(1, 3)])
case("broadcast_mul-same", "broadcast_mul", [r(2, 3), r(2, 3)])
case("broadcast_div", "broadcast_div", [r(2, 3), away(2, 1)])
case("broadcast_maximum", "broadcast_maximum", [r(2, 3, 2), r(2, 1, 2)])
case("broadcast_power", "broadcast_power", [pos(3, 2), r(1, 2)])
for name, make in [
    ("exp", r),
    ("log", pos),
    ("sqrt", pos),
    ("square", r),
    ("abs", away),
    ("sign", away),
    ("tanh", r),
    ("sigmoid", r),
    ("zeros_like", r),
    ("ones_like", r),
]:
    case(name, name, [make(2, 3)])
case("clip", "clip", [r(3, 4)], a_min=-0.5, a_max=0.5)
case("clip-strings", "clip", [r(3, 4)], a_min="-1", a_max="0.3")
case("cast-float16", "Cast", [r(2, 3)], dtype="float16")
case("cast-int32", "Cast", [u(-3, 3, 2, 3)], dtype="int32")
case("smooth_l1-1", "smooth_l1", [2 * r(3, 4)], scalar=1.0)
case("smooth_l1-2", "smooth_l1", [r(3, 4)], scalar="2.0")
case("plus_scalar", "_plus_scalar", [r(2, 3)], scalar=2.5)
case("rminus_scalar", "_rminus_scalar", [r(2, 3)], scalar=1.0)
case("rdiv_scalar", "_rdiv_scalar", [away(2, 3)], scalar=2.0)
case("power_scalar-3", "_power_scalar", [r(2, 3)], scalar=3.0)
case("power_scalar-half", "_power_scalar", [pos(2, 3)], scalar="0.5")
case("rpower_scalar", "_rpower_scalar", [r(2, 3)], scalar=2.0)
case("rpower_scalar-str", "_rpower_scalar", [r(2, 3)], scalar="1.5")
case("where-same", "where", [ints(0, 2, 2, 3), r(2, 3), r(2, 3)])
case("where-1d-cond", "where", [idx([1, 0]), r(2, 3), r(2, 3)])
case("dot", "dot", [r(3, 4), r(4, 5)])
case("dot-ta", "dot", [r(4, 3), r(4, 5)], transpose_a=True)
case("dot-tb", "dot", [r(3, 4), r(5, 4)], transpose_b="True")
case("dot-ta-tb", "dot", [r(4, 3), r(5, 4)], transpose_a=True, transpose_b=True)
case("dot-nd", "dot", [r(2, 3, 4), r(4, 5)])
case("dot-nd-tb", "dot", [r(2, 3, 4), r(5, 4)], transpose_b=True)
case("dot-nd-ta", "dot", [r(4, 3, 2), r(4, 5)], transpose_a=True)
case("dot-vec", "dot", [r(4), r(4)])
case("batch_dot", "batch_dot", [r(2, 3, 4), r(2, 4, 5)])
case("batch_dot-ta", "batch_dot", [r(2, 4, 3), r(2, 4, 5)], transpose_a=True)
case("batch_dot-tb", "batch_dot", [r(2, 3, 4), r(2, 5, 4)], transpose_b="True")

# ----------------------------------------------------------------------------- reductions, sort
group("reduce")
case("sum-axis1", "sum", [r(2, 3, 4)], axis=1)
case("sum-axes-keep", "sum", [r(2, 3, 4)], axis=(0, 2), keepdims=True)
case("sum-exclude", "sum", [r(2, 3, 4)], axis=1, exclude=True)
case("sum-all", "sum", [r(2, 3)])
case("mean-last-keep", "mean", [r(2, 3, 4)], axis=-1, keepdims=True)
case("mean-strings", "mean", [r(2, 3, 4)], axis="(0, 2)", keepdims="True")
case("mean-all", "mean", [r(3, 2)])
case("max-axis1", "max", [r(2, 3, 4)], axis=1)
case("max-exclude", "max", [r(2, 3, 4)], axis=(0,), exclude=True)
case("min-axes", "min", [r(2, 3, 4)], axis=(0, 1))
case("min-all", "min", [r(3, 4)])
case("prod-axis0", "prod", [away(3, 4)], axis=0)
case("prod-keep", "prod", [away(2, 3)], axis=1, keepdims=True)
case("argmax-axis1", "argmax", [r(2, 3, 4)], axis=1)
case("argmax-flat", "argmax", [r(3, 4)])
case("argmax-keep", "argmax", [r(3, 4)], axis=-1, keepdims=True)
case("argmin-axis0", "argmin", [r(3, 4)], axis=0)
case("norm-default", "norm", [r(2, 3)])
case("norm-ord1-axis1", "norm", [r(2, 3, 4)], ord=1, axis=1)
case("norm-axes-keep", "norm", [r(2, 3, 4)], ord=2, axis=(1, 2), keepdims=True)
case("norm-last", "norm", [r(3, 4)], axis=-1)
case("topk-indices", "topk", [r(3, 5)], k=2)
case("topk-value", "topk", [r(3, 5)], k=2, ret_typ="value")
case("topk-both", "topk", [r(3, 5)], k=3, ret_typ="both")
case("topk-ascend-axis0", "topk", [r(4, 3)], k=2, axis=0, ret_typ="value", is_ascend=True)
case("topk-mask", "topk", [r(2, 5)], k=2, ret_typ="mask")
# sort's default axis is -1, but MXNet 1.9.1 cannot differentiate a sort without an
# explicit axis (its _backward_topk gets axis=''), so the axis is spelled out here.
case("sort-last", "sort", [r(3, 4)], axis=-1)
case("sort-axis0-desc", "sort", [r(3, 4)], axis=0, is_ascend=False)
case("argsort-desc", "argsort", [r(3, 4)], axis=1, is_ascend="False")
case("argsort-default", "argsort", [r(2, 5)])

# ----------------------------------------------------------------------------- shape
group("shape")
case("reshape-plain", "reshape", [r(2, 3, 4)], shape=(4, 6))
case("reshape-0-m1", "reshape", [r(2, 3, 4)], shape=(0, -1))
case("reshape-m2", "reshape", [r(2, 3, 4)], shape=(0, -2))
case("reshape-m3", "reshape", [r(2, 3, 4)], shape=(-3, 4))
case("reshape-m4", "reshape", [r(2, 3, 4)], shape=(-4, 1, 2, -2))
case("reshape-m4-m1", "reshape", [r(2, 3, 4)], shape=(0, -4, -1, 3, 0))
case("reshape-flat", "reshape", [r(2, 3, 4)], shape=(-1,))
case("reshape-reverse", "reshape", [r(2, 3, 4)], shape=(-1, 0), reverse=True)
case("reshape-string", "reshape", [r(2, 3, 4)], shape="(0, -1)")
case("transpose-default", "transpose", [r(2, 3, 4)])
case("transpose-axes", "transpose", [r(2, 3, 4)], axes=(1, 0, 2))
case("transpose-string", "transpose", [r(2, 3, 4)], axes="(2, 0, 1)")
case("expand_dims-1", "expand_dims", [r(2, 3)], axis=1)
case("expand_dims-neg", "expand_dims", [r(2, 3)], axis=-1)
case("squeeze-all", "squeeze", [r(2, 1, 3, 1)])
case("squeeze-axis", "squeeze", [r(2, 1, 3, 1)], axis=1)
case("squeeze-axes", "squeeze", [r(2, 1, 3, 1)], axis=(1, 3))
case("concat-dim1", "Concat", [r(2, 3), r(2, 2)], dim=1)
case("concat-dim0-3", "Concat", [r(1, 3), r(2, 3), r(1, 3)], dim=0, num_args=3)
case("stack-0", "stack", [r(2, 3), r(2, 3)])
case("stack-last-3", "stack", [r(2, 3), r(2, 3), r(2, 3)], axis=-1, num_args=3)
case("split-2", "split", [r(2, 4)], num_outputs=2, axis=1)
case("split-squeeze", "split", [r(3, 2)], num_outputs=3, axis=0, squeeze_axis=True)
case("split-strings", "split", [r(2, 6)], num_outputs="3", axis="-1")
case("tile-2d", "tile", [r(2, 3)], reps=(2, 1))
case("tile-expand", "tile", [r(2, 3)], reps=(2, 2, 2))
case("tile-short", "tile", [r(2, 3)], reps="(3,)")
case("repeat-flat", "repeat", [r(2, 3)], repeats=2)
case("repeat-axis1", "repeat", [r(2, 3)], repeats=2, axis=1)
case("repeat-neg", "repeat", [r(2, 3)], repeats="3", axis="-2")
case("slice-basic", "slice", [r(3, 4)], begin=(0, 1), end=(2, 3))
case("slice-none-negstep", "slice", [r(3, 5)], begin=(None, 3), end=(None, 0), step=(1, -1))
case("slice-step2", "slice", [r(5, 4)], begin=(0,), end=(None,), step=(2,))
case("slice-negbegin", "slice", [r(4, 3)], begin=(-3, None), end=(-1, None))
case("slice-string", "slice", [r(3, 4)], begin="(1, None)", end="(None, 3)")
case("slice_axis", "slice_axis", [r(3, 4)], axis=1, begin=1, end=3)
case("slice_axis-none", "slice_axis", [r(4, 3)], axis=0, begin=-2, end=None)
case("broadcast_to", "broadcast_to", [r(1, 3)], shape=(4, 3))
case("broadcast_to-zero", "broadcast_to", [r(1, 3)], shape=(2, 0))
case("broadcast_like", "broadcast_like", [r(1, 3), r(4, 3)])
case("swapaxes", "swapaxes", [r(2, 3, 4)], dim1=0, dim2=2)
case("flip-axis1", "flip", [r(2, 3)], axis=1)
case("flip-axes", "flip", [r(2, 3, 2)], axis=(0, 2))
case("pad-constant", "Pad", [r(1, 2, 3, 3)], mode="constant", pad_width=(0, 0, 0, 0, 1, 2, 2, 1),
     constant_value=0.5)
case("pad-edge", "Pad", [r(1, 2, 3, 3)], mode="edge", pad_width=(0, 0, 0, 0, 2, 1, 1, 2))
case("pad-reflect", "Pad", [r(1, 1, 3, 4)], mode="reflect", pad_width="(0, 0, 0, 0, 1, 2, 2, 1)")
case("pad-5d", "Pad", [r(1, 1, 2, 2, 2)], mode="constant", pad_width=(0, 0, 0, 0, 1, 1, 0, 1, 1, 0))

# ----------------------------------------------------------------------------- indexing
group("index")
case("pick-last", "pick", [r(3, 4), ints(0, 4, 3)])
case("pick-axis0-keep", "pick", [r(3, 4), ints(0, 3, 4)], axis=0, keepdims=True)
case("pick-wrap", "pick", [r(3, 4), idx([-1, 5, 2])], axis=1, mode="wrap")
case("pick-clip", "pick", [r(3, 4), idx([-2, 7, 1])], axis="-1", mode="clip")
case("one_hot", "one_hot", [ints(0, 4, 2, 3)], depth=4)
case("one_hot-values", "one_hot", [idx([0, 3, -1, 5])], depth=4, on_value=2.0, off_value=-1.0)
case("take-axis0", "take", [r(5, 3), ints(0, 5, 2, 2)])
case("take-axis1", "take", [r(2, 4), idx([3, 0, 1])], axis=1)
case("take-wrap", "take", [r(5, 3), idx([-1, 4, 7])], mode="wrap")
case("take-clip", "take", [r(5, 3), idx([-2, 6, 2])], mode="clip")
case("gather_nd", "gather_nd", [r(3, 4), idx([[0, 2, 1], [1, 3, 0]])])
case("gather_nd-rows", "gather_nd", [r(3, 4), idx([[2, 0]])])
case("seqmask", "SequenceMask", [r(4, 3, 2), idx([2, 4, 1])], use_sequence_length=True)
case("seqmask-value", "SequenceMask", [r(4, 3), idx([1, 3, 0])], use_sequence_length=True,
     value=-1.0)
case("seqmask-axis1", "SequenceMask", [r(3, 4, 2), idx([3, 1, 2])], use_sequence_length="True",
     axis=1)
case("seqmask-off", "SequenceMask", [r(3, 2)])
# fmt: on
