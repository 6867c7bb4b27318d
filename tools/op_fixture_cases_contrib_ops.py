"""Contrib op families of MXNet's unit tests: Hawkes log likelihood, Khatri-Rao product,
straight-through estimators, quadratic, gradient multiplier, allclose, boolean_mask and
the modulated deformable convolution.

Imported last (after ``op_fixture_cases_contrib``) so the inputs of earlier cases do not
move. Rounding inputs stay clear of ties; deformable offsets keep sampling points away
from the integer grid.
"""

from __future__ import annotations

import numpy as np
from op_fixture_cases import ND, RNG, case, group, idx, r, u

# fmt: off
group("contrib_ops")


def _hawkes(n, t, k, lengths, horizon):
    lda = u(0.5, 3.0, n, k)
    alpha, beta = u(0.1, 0.6, k), u(0.5, 3.0, k)
    lags = ND(u(0.1, 3.0, n, t))
    marks = RNG.randint(0, k, (n, t)).astype(np.int32)
    state = ND(u(0.0, 1.0, n, k))
    return [lda, alpha, beta, state, lags, marks, idx(lengths), idx([horizon] * n)]


case("hawkesll", "_contrib_hawkesll", _hawkes(3, 6, 2, [6, 3, 0], 30.0))
case("hawkesll-univariate", "_contrib_hawkesll", _hawkes(2, 5, 1, [5, 4], 20.0))
case("khatri_rao-one", "khatri_rao", [ND(r(3, 4))])
case("khatri_rao-two", "khatri_rao", [ND(r(3, 2)), ND(r(4, 2))])
case("khatri_rao-three", "khatri_rao", [ND(r(2, 3)), ND(r(1, 3)), ND(r(3, 3))])


def _no_ties(*s):
    x = u(-4.0, 4.0, *s)
    return (np.floor(x) + np.clip(x - np.floor(x), 0.05, 0.45) * RNG.choice([1, 2], s)
            ).astype(np.float32)


case("round_ste", "_contrib_round_ste", [_no_ties(3, 5)])
case("sign_ste", "_contrib_sign_ste", [np.asarray([[-2.0, 0.0, 3.5], [0.5, -0.1, 0.0]],
                                                  np.float32)])
case("quadratic", "_contrib_quadratic", [r(2, 3, 4)], a=0.7, b=-1.5, c=2.0)
case("quadratic-default", "_contrib_quadratic", [r(5)])
case("quadratic-strings", "_contrib_quadratic", [r(2, 2)], a="2", c="-1.25")
case("gradientmultiplier", "_contrib_gradientmultiplier", [r(3, 4)], scalar=-0.35)
case("gradientmultiplier-default", "_contrib_gradientmultiplier", [r(2, 3)])
_a = r(3, 4)
case("allclose-true", "_contrib_allclose", [ND(_a), ND(_a * (1 + 1e-7))])
case("allclose-false", "_contrib_allclose", [ND(_a), ND(_a + 1e-3)])
case("allclose-tol", "_contrib_allclose", [ND(_a), ND(_a + 1e-3)], rtol=0.0, atol=2e-3)
_nan = np.asarray([1.0, np.nan, 2.0], np.float32)
case("allclose-nan", "_contrib_allclose", [ND(_nan), ND(_nan)])
case("allclose-nan-unequal", "_contrib_allclose", [ND(_nan), ND(_nan)], equal_nan=False)
case("boolean_mask", "_contrib_boolean_mask", [r(5, 3), idx([0, 1, 1, 0, 1])])
case("boolean_mask-3d", "_contrib_boolean_mask", [r(4, 2, 3), idx([1, 0, 0, 2])])
case("boolean_mask-none", "_contrib_boolean_mask", [r(3, 2), idx([0, 0, 0])])


def _off(*s):
    """Offsets whose sampling points stay >= 0.1 away from the integer grid."""
    return (RNG.randint(-1, 2, s) + u(0.1, 0.9, *s)).astype(np.float32)


# values only: MXNet 1.9.1's CPU backward of this op raises "only implemented in GPU"
# (tests/ops/test_contrib_math_ops.py checks the gradient against DeformableConvolution's)
MD = "_contrib_ModulatedDeformableConvolution"


def _nd(*arrays):
    return [ND(a) for a in arrays]


case("mdeformconv", MD, _nd(r(1, 4, 5, 5), _off(1, 18, 5, 5), u(0.1, 1.0, 1, 9, 5, 5),
                            r(3, 4, 3, 3), r(3)), kernel=(3, 3), num_filter=3, pad=(1, 1))
case("mdeformconv-groups", MD, _nd(r(2, 4, 6, 6), _off(2, 36, 3, 3), u(0.1, 1.0, 2, 18, 3, 3),
                                   r(4, 2, 3, 3)), kernel=(3, 3), num_filter=4, stride=(2, 2),
     pad=(1, 1), num_group=2, num_deformable_group=2, no_bias=True)
case("mdeformconv-dilate", MD, _nd(r(1, 2, 6, 6), _off(1, 8, 6, 6), u(0.1, 1.0, 1, 4, 6, 6),
                                   r(2, 2, 2, 2), r(2)), kernel="(2, 2)", num_filter="2",
     dilate=(2, 2), pad=(1, 1))
# fmt: on

# fmt: off
# MXNet's legacy Crop (NCHW windows; the second input gives its height and width only)
case("crop-hw", "Crop", [r(2, 3, 6, 7)], h_w=(3, 4), offset=(2, 1))
case("crop-like", "Crop", [r(1, 2, 5, 6), r(1, 1, 3, 2)], offset=(1, 3))
case("crop-center-like", "Crop", [r(1, 2, 6, 5), r(2, 2, 3, 3)], center_crop=True)
case("crop-center-hw", "Crop", [r(1, 1, 7, 7)], h_w=(4, 3), center_crop=True)
# fmt: on
# SoftmaxOutput of 3-d data with MXNet's inferred label shape data.shape[:-1]: its backward
# reads the first N labels as the N rows' classes
case("softmax_output-3d-label", "SoftmaxOutput", [r(2, 3, 4), idx([[1, 5, 2], [7, 0, 3]])])
