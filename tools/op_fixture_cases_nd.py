"""Op cases of the ``ops_nd`` fixture set: optimizer updates, linear algebra, densities,
assorted NDArray ops, integer arithmetic (plain numpy, no MXNet import).

Recorded by ``make_op_fixtures.py --set ops_nd`` into ``tests/fixtures/ops_nd``. Update
ops take the weight and gradient as ``ND`` inputs and their states as ``Aux`` inputs
(the values after the call are stored, as MXNet mutates them). ``_out=(i, ...)`` passes
those inputs as ``out=`` (MXNet's multi-tensor updates need it); they are then recorded
as the outputs.
"""

from __future__ import annotations

import numpy as np
from op_fixture_cases import ND, Aux, Case

RNG = np.random.RandomState(20241124)
CASES: list[Case] = []
_GROUP = [""]


def group(name):
    _GROUP[0] = name


def case(cid, op, inputs, train=False, **attrs):
    if any(c.id == cid for c in CASES):
        raise ValueError(f"duplicate case id {cid}")
    CASES.append(Case(cid, op, list(inputs), attrs, train, _GROUP[0]))


def r(*s):
    return RNG.randn(*s).astype(np.float32)


def u(lo, hi, *s):
    return RNG.uniform(lo, hi, s).astype(np.float32)


def nd(a):
    return ND(np.asarray(a))


def spd(n, batch=()):
    a = RNG.randn(*batch, n, n)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)


def lower(n, batch=()):
    a = np.tril(RNG.uniform(0.5, 1.5, (*batch, n, n)))
    return (a + np.eye(n) * 1.0).astype(np.float32)


# fmt: off
# ----------------------------------------------------------------------------- optimizers
group("optim")
S = (3, 4)
for cg in (-1.0, 0.3):
    tag = "clip" if cg >= 0 else "noclip"
    case(f"sgd-{tag}", "sgd_update", [nd(r(*S)), nd(r(*S))], lr=0.1, wd=0.01,
         rescale_grad=0.5, clip_gradient=cg)
    case(f"sgd-mom-{tag}", "sgd_mom_update", [nd(r(*S)), nd(r(*S)), Aux(r(*S))], lr=0.1,
         momentum=0.9, wd=0.01, rescale_grad=0.5, clip_gradient=cg)
    case(f"nag-{tag}", "nag_mom_update", [nd(r(*S)), nd(r(*S)), Aux(r(*S))], lr=0.1,
         momentum=0.9, wd=0.02, rescale_grad=0.7, clip_gradient=cg)
    case(f"adam-{tag}", "adam_update", [nd(r(*S)), nd(r(*S)), Aux(r(*S)), Aux(u(0.1, 1, *S))],
         lr=0.01, beta1=0.8, beta2=0.95, epsilon=1e-6, wd=0.01, rescale_grad=0.5,
         clip_gradient=cg)
    case(f"rmsprop-{tag}", "rmsprop_update", [nd(r(*S)), nd(r(*S)), Aux(u(0.1, 1, *S))],
         lr=0.01, gamma1=0.9, epsilon=1e-6, wd=0.01, rescale_grad=0.5, clip_gradient=cg,
         clip_weights=0.8)
    case(f"rmspropalex-{tag}", "rmspropalex_update",
         [nd(r(*S)), nd(r(*S)), Aux(u(1, 2, *S)), Aux(u(-0.1, 0.1, *S)), Aux(r(*S))], lr=0.01,
         gamma1=0.9, gamma2=0.8, epsilon=1e-6, wd=0.01, rescale_grad=0.5, clip_gradient=cg)
    case(f"ftrl-{tag}", "ftrl_update", [nd(r(*S)), nd(r(*S)), Aux(r(*S)), Aux(u(0.1, 1, *S))],
         lr=0.1, lamda1=0.05, beta=1.5, wd=0.01, rescale_grad=0.5, clip_gradient=cg)
    case(f"ftml-{tag}", "ftml_update",
         [nd(r(*S)), nd(r(*S)), Aux(u(0.1, 1, *S)), Aux(u(0.1, 1, *S)), Aux(r(*S))], lr=0.1,
         beta1=0.6, beta2=0.9, epsilon=1e-6, t=3, wd=0.01, rescale_grad=0.5, clip_grad=cg)
    case(f"signum-{tag}", "signum_update", [nd(r(*S)), nd(r(*S)), Aux(r(*S))], lr=0.1,
         momentum=0.9, wd=0.01, rescale_grad=0.5, clip_gradient=cg, wd_lh=0.05)
    case(f"lamb1-{tag}", "lamb_update_phase1", [nd(r(*S)), nd(r(*S)), Aux(r(*S)),
         Aux(u(0.1, 1, *S))], beta1=0.9, beta2=0.99, epsilon=1e-6, t=2, bias_correction=True,
         wd=0.01, rescale_grad=0.5, clip_gradient=cg)
case("signsgd", "signsgd_update", [nd(r(*S)), nd(r(*S))], lr=0.1, wd=0.01)
case("lamb1-nobias", "lamb_update_phase1", [nd(r(*S)), nd(r(*S)), Aux(r(*S)),
     Aux(u(0.1, 1, *S))], t=4, bias_correction=False, wd=0.0)
case("lamb2", "lamb_update_phase2", [nd(r(*S)), nd(r(*S)), nd(u(1, 2, 1)), nd(u(1, 2, 1))],
     lr=0.1)
case("lamb2-bounds", "lamb_update_phase2", [nd(r(*S)), nd(r(*S)), nd(np.array([5.0],
     np.float32)), nd(u(1, 2, 1))], lr=0.1, lower_bound=0.5, upper_bound=2.0)
W16 = r(*S).astype(np.float16)
case("mp-sgd", "mp_sgd_update", [nd(W16), nd(r(*S).astype(np.float16)),
     Aux(W16.astype(np.float32))], lr=0.1, wd=0.01, rescale_grad=0.5)
case("mp-sgd-mom", "mp_sgd_mom_update", [nd(W16), nd(r(*S).astype(np.float16)), Aux(r(*S)),
     Aux(W16.astype(np.float32))], lr=0.1, momentum=0.9, wd=0.01, clip_gradient=0.5)
case("mp-nag", "mp_nag_mom_update", [nd(W16), nd(r(*S).astype(np.float16)), Aux(r(*S)),
     Aux(W16.astype(np.float32))], lr=0.1, momentum=0.9, wd=0.05)
case("mp-lamb1", "mp_lamb_update_phase1", [nd(W16), nd(r(*S).astype(np.float16)), Aux(r(*S)),
     Aux(u(0.1, 1, *S)), nd(W16.astype(np.float32))], t=2, wd=0.01)
case("mp-lamb2", "mp_lamb_update_phase2", [nd(W16), nd(r(*S)), nd(u(1, 2, 1)), nd(u(1, 2, 1)),
     Aux(W16.astype(np.float32))], lr=0.1)
case("multi-sgd", "multi_sgd_update", [nd(r(2, 3)), nd(r(2, 3)), nd(r(4)), nd(r(4))],
     num_weights=2, lrs=(0.1, 0.2), wds=(0.0, 0.01), rescale_grad=0.5, clip_gradient=0.4,
     _out=(0, 2))
case("multi-sgd-mom", "multi_sgd_mom_update", [nd(r(2, 3)), nd(r(2, 3)), Aux(r(2, 3)), nd(r(4)),
     nd(r(4)), Aux(r(4))], num_weights=2, lrs=(0.1, 0.2), wds=(0.0, 0.01), momentum=0.9,
     _out=(0, 3))
case("multi-mp-sgd", "multi_mp_sgd_update", [nd(W16), nd(r(*S).astype(np.float16)),
     Aux(W16.astype(np.float32))], num_weights=1, lrs=(0.1,), wds=(0.01,), _out=(0,))
case("multi-mp-sgd-mom", "multi_mp_sgd_mom_update", [nd(W16), nd(r(*S).astype(np.float16)),
     Aux(r(*S)), Aux(W16.astype(np.float32))], num_weights=1, lrs=(0.1,), wds=(0.01,),
     momentum=0.8, _out=(0,))
case("preloaded-sgd", "preloaded_multi_sgd_update", [nd(r(2, 3)), nd(r(2, 3)), nd(r(4)),
     nd(r(4)), nd(np.array([0.1, 0.2], np.float32)), nd(np.array([0.0, 0.01], np.float32))],
     num_weights=2, _out=(0, 2))
case("preloaded-sgd-mom", "preloaded_multi_sgd_mom_update", [nd(r(2, 3)), nd(r(2, 3)),
     Aux(r(2, 3)), nd(np.array([0.1], np.float32)), nd(np.array([0.01], np.float32))],
     num_weights=1, momentum=0.9, _out=(0,))
case("preloaded-mp-sgd", "preloaded_multi_mp_sgd_update", [nd(W16),
     nd(r(*S).astype(np.float16)), Aux(W16.astype(np.float32)), nd(np.array([0.1], np.float32)),
     nd(np.array([0.01], np.float32))], num_weights=1, _out=(0,))
case("preloaded-mp-sgd-mom", "preloaded_multi_mp_sgd_mom_update", [nd(W16),
     nd(r(*S).astype(np.float16)), Aux(r(*S)), Aux(W16.astype(np.float32)),
     nd(np.array([0.1], np.float32)), nd(np.array([0.01], np.float32))], num_weights=1,
     momentum=0.9, clip_gradient=0.3, _out=(0,))
case("adamw", "_adamw_update", [nd(r(*S)), nd(r(*S)), Aux(r(*S)), Aux(u(0.1, 1, *S)),
     nd(np.array([0.5], np.float32))], lr=0.01, eta=0.9, wd=0.01, clip_gradient=0.4)
case("mp-adamw", "_mp_adamw_update", [nd(W16), nd(r(*S).astype(np.float16)), Aux(r(*S)),
     Aux(u(0.1, 1, *S)), Aux(W16.astype(np.float32)), nd(np.array([0.5], np.float32))],
     lr=0.01, eta=0.9, wd=0.01)
case("multi-lars", "multi_lars", [nd(u(0.1, 1, 4)), nd(np.array([1.0, 0.0, 4.0, 2.0],
     np.float32)), nd(np.array([2.0, 1.0, 0.0, 3.0], np.float32)), nd(u(0, 0.1, 4))], eta=0.01,
     eps=1e-6, rescale_grad=0.5)

# ----------------------------------------------------------------------------- linear algebra
group("linalg")
case("gemm", "linalg_gemm", [r(2, 3), r(3, 4), r(2, 4)], alpha=1.5, beta=0.5)
case("gemm-trans-batch", "linalg_gemm", [r(2, 3, 2), r(2, 4, 3), r(2, 2, 4)], transpose_a=True,
     transpose_b=True, alpha=0.7)
case("gemm-axis", "linalg_gemm", [r(3, 2, 4), r(4, 2, 5), r(3, 2, 5)], axis=0)
case("gemm2", "linalg_gemm2", [r(2, 3), r(3, 4)], alpha=2.0)
case("gemm2-tb-batch", "linalg_gemm2", [r(2, 2, 3), r(2, 4, 3)], transpose_b=True)
case("potrf", "linalg_potrf", [spd(3)])
case("potrf-batch", "linalg_potrf", [spd(2, (2,))])
case("potri", "linalg_potri", [lower(3)])
case("trmm", "linalg_trmm", [lower(3), r(3, 2)], alpha=2.0)
case("trmm-right-t", "linalg_trmm", [lower(3), r(2, 3)], rightside=True, transpose=True)
case("trmm-upper", "linalg_trmm", [np.swapaxes(lower(3), 0, 1).copy(), r(3, 2)], lower=False)
case("trsm", "linalg_trsm", [lower(3), r(3, 2)], alpha=0.5)
case("trsm-right", "linalg_trsm", [lower(3), r(2, 3)], rightside=True)
case("trsm-t-batch", "linalg_trsm", [lower(3, (2,)), r(2, 3, 2)], transpose=True)
case("sumlogdiag", "linalg_sumlogdiag", [spd(3)])
case("sumlogdiag-batch", "linalg_sumlogdiag", [spd(2, (3,))])
case("extractdiag", "linalg_extractdiag", [r(3, 3)])
case("extractdiag-off", "linalg_extractdiag", [r(2, 4, 4)], offset=-1)
case("makediag", "linalg_makediag", [r(3)])
case("makediag-off", "linalg_makediag", [r(2, 3)], offset=2)
case("extracttrian", "linalg_extracttrian", [r(3, 3)])
case("extracttrian-up", "linalg_extracttrian", [r(2, 4, 4)], lower=False)
case("extracttrian-off", "linalg_extracttrian", [r(4, 4)], offset=1)
case("extracttrian-neg", "linalg_extracttrian", [r(4, 4)], offset=-2)
case("maketrian", "linalg_maketrian", [r(6)])
case("maketrian-up", "linalg_maketrian", [r(2, 6)], lower=False)
case("maketrian-off", "linalg_maketrian", [r(3)], offset=1)
case("syrk", "linalg_syrk", [r(2, 3)], alpha=0.5)
case("syrk-t", "linalg_syrk", [r(2, 3, 2)], transpose=True)
case("gelqf", "linalg_gelqf", [r(2, 3)])
case("gelqf-batch", "linalg_gelqf", [r(2, 3, 4)])
case("syevd", "_linalg_syevd", [spd(3)])
case("inverse", "linalg_inverse", [spd(3)])
case("det", "linalg_det", [r(2, 3, 3)])
case("slogdet", "linalg_slogdet", [r(3, 3)])

# ----------------------------------------------------------------------------- densities
group("randpdf")
case("pdf-uniform", "random_pdf_uniform", [u(0.2, 0.8, 2, 3), u(-1, 0, 2), u(1, 2, 2)])
case("pdf-normal", "random_pdf_normal", [r(2, 3), r(2), u(0.5, 2, 2)])
case("pdf-normal-log", "random_pdf_normal", [r(2, 2, 3), r(2, 2), u(0.5, 2, 2, 2)], is_log=True)
case("pdf-gamma", "random_pdf_gamma", [u(0.5, 3, 2, 4), u(1, 3, 2), u(0.5, 2, 2)])
case("pdf-exponential", "random_pdf_exponential", [u(0.1, 2, 3, 2), u(0.5, 2, 3)], is_log=True)
case("pdf-poisson", "random_pdf_poisson", [nd(np.array([[0, 1, 3], [2, 5, 4]], np.float32)),
     u(1, 4, 2)])
case("pdf-negbinomial", "random_pdf_negative_binomial", [nd(np.array([[0, 2, 3], [1, 4, 6]],
     np.float32)), u(2, 5, 2), u(0.3, 0.7, 2)])
case("pdf-gen-negbinomial", "random_pdf_generalized_negative_binomial",
     [nd(np.array([[0, 2, 3], [1, 4, 6]], np.float32)), u(1, 3, 2), u(0.2, 0.8, 2)], is_log=True)
case("pdf-dirichlet", "random_pdf_dirichlet", [np.array([[[0.2, 0.8], [0.6, 0.4]]],
     np.float32), u(0.5, 2, 1, 2)])

# ----------------------------------------------------------------------------- assorted
group("ndmisc")
case("fill-element-0index", "fill_element_0index", [nd(r(3, 4)), nd(r(3)),
     nd(np.array([1, 3, 0], np.float32))])
case("onehot-encode", "_onehot_encode", [nd(np.array([2, 0, 1], np.float32)),
     nd(np.zeros((3, 4), np.float32))])
case("split-v2", "_split_v2", [r(5, 3)], indices=(0, 2, 3), axis=0)
case("split-v2-sections", "_split_v2", [r(2, 6)], indices=(), sections=3, axis=1)
case("split-v2-squeeze", "_split_v2", [r(3, 2)], indices=(0, 1, 2), axis=0, squeeze_axis=True)
case("cumsum-nd-flat", "cumsum", [r(2, 3)])
case("cumsum-nd-axis", "cumsum", [r(2, 3, 2)], axis=1)
case("multi-sum-sq", "multi_sum_sq", [nd(r(2, 3)), nd(r(4))], num_arrays=2)
case("all-finite", "all_finite", [nd(np.array([1.0, np.inf], np.float32))])
case("multi-all-finite", "multi_all_finite", [nd(r(2)), nd(r(3))], num_arrays=2)
case("choose-element", "choose_element_0index", [r(3, 4), nd(np.array([1, 3, 0],
     np.float32))])

# ----------------------------------------------------------------------------- integer arithmetic
group("intmath")
I1 = RNG.randint(-20, 20, (2, 3)).astype(np.int32)
I2 = RNG.randint(1, 7, (2, 3)).astype(np.int32)
case("int-div", "broadcast_div", [nd(I1), nd(I2)])
case("int-div-scalar", "_div_scalar", [nd(I1)], scalar=3)
case("int-rdiv-scalar", "_rdiv_scalar", [nd(I2)], scalar=17)
case("int-equal-big-scalar", "_equal_scalar", [nd(np.array([50000001, 50000000], np.int32))],
     scalar=50000001)
case("int-plus-big-scalar", "_plus_scalar", [nd(np.array([50000001], np.int32))], scalar=3)
case("uint8-div", "broadcast_div", [nd(np.array([200, 7, 9], np.uint8)),
     nd(np.array([3, 2, 9], np.uint8))])
case("int-round", "round", [nd(np.array([50000001, -3], np.int32))])
case("int-floor", "floor", [nd(np.array([50000001, -3], np.int32))])
