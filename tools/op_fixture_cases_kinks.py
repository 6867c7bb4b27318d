"""Op cases whose inputs sit exactly on a kink (subgradient points) or a tie.

MXNet picks one subgradient at every non-differentiable point (relu'(0) = 0,
maximum's tie goes to the left operand, clip passes the gradient at its bounds,
max pooling routes a tied window to its first maximum...). These cases record
them so gluonjax's gradients are compared there, not only at smooth points.

Imported after the other case modules so their random inputs do not move.
"""

from __future__ import annotations

import numpy as np
from op_fixture_cases import ND, case, group


def a(*values):
    """A float32 array from literal values (kink points spelled out)."""
    return np.asarray(values, dtype=np.float32)


# kink of relu/abs/sign/LeakyReLU at 0 (with a negative zero), plus smooth points
AT0 = a([-1.5, 0.0, 0.7], [-0.0, 2.0, 0.0])
# ties for maximum/minimum: equal pairs at several positions
TIE_L = a([0.0, 1.0, 2.0], [3.0, 3.0, -1.0])
TIE_R = a([0.0, 5.0, 2.0], [3.0, 0.0, -1.5])
# values on the clip bounds -0.5 and 0.5
ON_BOUNDS = a([-0.5, 0.5, 0.2], [-0.7, 0.5, -0.5])
# ties inside pooling windows and across windows
POOL_TIES = a(
    [[[1.0, 1.0, 0.0, 2.0], [1.0, 0.5, 2.0, 2.0], [0.0, 3.0, 3.0, -1.0], [3.0, 3.0, -1.0, -1.0]]]
)
SORT_TIES = a([1.0, 3.0, 3.0, 0.0, 3.0], [2.0, 2.0, -1.0, 2.0, -1.0])

# fmt: off
group("kinks")
case("kink-relu", "relu", [AT0])
case("kink-act-relu", "Activation", [AT0], act_type="relu")
case("kink-act-softrelu", "Activation", [AT0], act_type="softrelu")
case("kink-act-softsign", "Activation", [AT0], act_type="softsign")
case("kink-leaky", "LeakyReLU", [AT0], act_type="leaky", slope=0.1)
case("kink-elu", "LeakyReLU", [AT0], act_type="elu", slope=0.5)
case("kink-selu", "LeakyReLU", [AT0], act_type="selu")
case("kink-gelu", "LeakyReLU", [AT0], act_type="gelu")
case("kink-prelu", "LeakyReLU", [AT0, a(0.25, 0.1, 0.5)], act_type="prelu")
case("kink-abs", "abs", [AT0])
case("kink-sign", "sign", [AT0])
case("kink-softsign", "softsign", [AT0])
case("kink-norm-l1", "norm", [AT0], ord=1, axis=1)
case("kink-broadcast_maximum", "broadcast_maximum", [TIE_L, TIE_R])
case("kink-broadcast_minimum", "broadcast_minimum", [TIE_L, TIE_R])
case("kink-broadcast_maximum-bcast", "broadcast_maximum", [TIE_L, a([[0.0, 3.0, 2.0]])])
case("kink-broadcast_minimum-bcast", "broadcast_minimum", [a([[3.0], [0.0]]), TIE_L])
case("kink-maximum", "_maximum", [TIE_L, TIE_R])
case("kink-minimum", "_minimum", [TIE_L, TIE_R])
case("kink-maximum_scalar", "_maximum_scalar", [AT0], scalar=0.0)
case("kink-maximum_scalar-2", "_maximum_scalar", [TIE_L], scalar=3.0)
case("kink-minimum_scalar", "_minimum_scalar", [AT0], scalar=0.0)
case("kink-minimum_scalar-2", "_minimum_scalar", [TIE_L], scalar="2")
case("kink-clip", "clip", [ON_BOUNDS], a_min=-0.5, a_max=0.5)
case("kink-clip-point", "clip", [ON_BOUNDS], a_min=0.5, a_max=0.5)
case("kink-smooth_l1-1", "smooth_l1", [a([-1.0, 0.0, 1.0], [0.5, -2.0, 1.5])], scalar=1.0)
case("kink-smooth_l1-2", "smooth_l1", [a([-0.25, 0.0, 0.25], [0.1, -1.0, 0.3])], scalar=2.0)
case("kink-max-ties", "max", [TIE_L], axis=1)
case("kink-min-ties", "min", [TIE_R], axis=0)
case("kink-max-all-ties", "max", [a([[3.0, 1.0], [3.0, 3.0]])])
case("kink-argmax-ties", "argmax", [TIE_L], axis=1)
case("kink-argmin-ties", "argmin", [TIE_R], axis=1)
case("kink-argmax_channel-ties", "argmax_channel", [ND(TIE_L)])
case("kink-pool-max-ties", "Pooling", [POOL_TIES], kernel=(2, 2), stride=(1, 1), train=True)
case("kink-pool-max-ties-s2", "Pooling", [POOL_TIES], kernel=(2, 2), stride=(2, 2), train=True)
case("kink-pool-max-ties-pad", "Pooling", [POOL_TIES - 5.0], kernel=(3, 3), stride=(2, 2),
     pad=(1, 1), train=True)
case("kink-pool-global-max-ties", "Pooling", [POOL_TIES], kernel=(1, 1), global_pool=True,
     train=True)
case("kink-pool1d-max-ties", "Pooling", [a([[2.0, 2.0, 1.0, 2.0, 2.0, 0.0]])], kernel=(3,),
     stride=(1,), train=True)
case("kink-topk-value-ties", "topk", [SORT_TIES], k=3, ret_typ="value")
case("kink-topk-both-ties", "topk", [SORT_TIES], k=2, ret_typ="both", is_ascend=True)
case("kink-topk-indices-ties", "topk", [SORT_TIES], k=4)
case("kink-topk-mask-ties", "topk", [SORT_TIES], k=2, ret_typ="mask")
case("kink-sort-ties", "sort", [SORT_TIES], axis=-1)
case("kink-sort-desc-ties", "sort", [SORT_TIES], axis=-1, is_ascend=False)
case("kink-argsort-ties", "argsort", [SORT_TIES], axis=-1)
case("kink-argsort-desc-ties", "argsort", [SORT_TIES], axis=-1, is_ascend=False)
case("kink-where-equal", "where", [ND(a([1.0, 0.0, 1.0], [0.0, 0.0, 1.0])), TIE_L, TIE_L.copy()])
case("kink-broadcast_mod", "broadcast_mod", [a([4.0, -4.0, 3.0], [6.0, -1.0, 0.0]),
                                             a([2.0, 2.0, -3.0], [-2.0, 0.5, 2.0])])
case("kink-mod_scalar", "_mod_scalar", [a([4.0, -4.0, 3.0], [2.5, -1.0, 0.0])], scalar=2.0)
case("kink-rmod_scalar", "_rmod_scalar", [a([2.0, -2.0, 3.0], [4.0, -1.0, 0.5])], scalar=4.0)
case("kink-round-half", "round", [a([0.5, 1.5, 2.5], [-0.5, -2.5, 0.0])])
case("kink-rint-half", "rint", [a([0.5, 1.5, 2.5], [-0.5, -2.5, 0.0])])
case("kink-fix", "fix", [a([0.5, -1.5, 2.0], [-0.0, -2.0, 0.0])])
case("kink-floor-ceil", "floor", [a([1.0, -1.0, 0.5], [-0.5, 0.0, 2.0])])
case("kink-ceil", "ceil", [a([1.0, -1.0, 0.5], [-0.5, 0.0, 2.0])])
case("kink-maereg-equal", "MAERegressionOutput", [a([1.0, 2.0], [0.0, -1.0]),
                                                  ND(a([1.0, 0.0], [0.0, 3.0]))])
case("kink-svm-margin", "SVMOutput", [a([1.0, -1.0, 0.5], [-1.0, 1.0, 2.0]), ND(a(0.0, 2.0))])
case("kink-svm-margin-linear", "SVMOutput", [a([1.0, -1.0, 0.5], [-1.0, 1.0, 2.0]),
                                             ND(a(0.0, 2.0))], use_linear=True)
case("kink-hard_sigmoid", "hard_sigmoid", [a([-2.5, 2.5, 0.0], [-3.0, 3.0, 1.0])])
case("kink-hard_sigmoid-params", "hard_sigmoid", [a([-1.0, 1.0, 0.5], [-0.0, 2.0, -1.5])],
     alpha=0.5, beta=0.5)
NAN = float("nan")
case("kink-relu-nan", "relu", [a([NAN, 1.0, -1.0])])
case("kink-maximum-nan", "broadcast_maximum", [a([NAN, 1.0, 2.0]), a([1.0, NAN, 2.0])])
case("kink-minimum-nan", "broadcast_minimum", [a([NAN, 1.0, 2.0]), a([1.0, NAN, 2.0])])
case("kink-hypot-origin", "broadcast_hypot", [a([0.0, 3.0, 0.0]), a([0.0, 4.0, -2.0])])
case("kink-hypot_scalar-origin", "_hypot_scalar", [a([0.0, 3.0, -4.0])], scalar=0.0)
case("kink-power-zero-base", "broadcast_power", [a([0.0, 0.0, 2.0]), a([2.0, 3.0, 0.0])])
case("kink-dropout-always-p0", "Dropout", [AT0], p=0.0, mode="always", train=True)
# fmt: on
