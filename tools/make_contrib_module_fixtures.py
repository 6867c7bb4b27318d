"""Record MXNet 1.9.1's thin contrib modules for gluonjax's tests: GroupAdaGrad
(``tests/test_optimizer_contrib.py``), ``nd.contrib.multi_adamw_update``, SVRGModule
training (``tests/module/test_svrg.py``) and a CompositeEmbedding
(``tests/test_contrib_text.py``).

Run with the reference interpreter::

    MXNET_MKLDNN_ENABLED=0 .venv-mxnet/bin/python tools/make_contrib_module_fixtures.py

Writes ``tests/fixtures/contrib_modules/ref.npz``: inputs and MXNet's results, keyed
``<case>.<array>``.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections import Counter
from pathlib import Path

import mxnet as mx
import numpy as np
from mxnet.contrib import text
from mxnet.contrib.svrg_optimization.svrg_module import SVRGModule

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "contrib_modules"
R = {}


def group_adagrad():
    rng = np.random.RandomState(0)
    w0 = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    grads = rng.uniform(-1, 1, (3, 4, 3)).astype(np.float32)
    R["gag.w0"], R["gag.grads"] = w0, grads
    for case, kw, sparse in [
        ("dense", dict(learning_rate=0.1, eps=1e-6), False),
        ("clip", dict(learning_rate=0.2, rescale_grad=0.5, clip_gradient=0.3), False),
        ("sparse", dict(learning_rate=0.1), True),
    ]:
        opt = mx.optimizer.contrib.GroupAdaGrad(**kw)
        w = mx.nd.array(w0)
        state = opt.create_state(0, w)
        for k, g in enumerate(grads):
            g = g.copy()
            if sparse:
                g[k % 4] = 0  # one row not stored
                nz = [r for r in range(4) if r != k % 4]
                grad = mx.nd.sparse.row_sparse_array((g[nz], nz), shape=g.shape)
            else:
                grad = mx.nd.array(g)
            opt.update(0, w, grad, state)
        R[f"gag.{case}.w"], R[f"gag.{case}.h"] = w.asnumpy(), state.asnumpy()


def multi_adamw():
    rng = np.random.RandomState(1)
    shapes = [(3, 4), (5,)]
    arrs = {n: [rng.uniform(0.1, 1, s).astype(np.float32) for s in shapes] for n in "wgmv"}
    for n, lst in arrs.items():
        for i, a in enumerate(lst):
            R[f"adamw.{n}{i}"] = a
    nd = {n: [mx.nd.array(a) for a in lst] for n, lst in arrs.items()}
    kw = dict(lrs=[0.1, 0.05], wds=[0.01, 0.0], etas=[1.0, 0.5], clip_gradient=0.5)
    mx.nd.contrib.multi_adamw_update(nd["w"], nd["g"], nd["m"], nd["v"], 2.0, out=nd["w"], **kw)
    for n in "wmv":
        for i, a in enumerate(nd[n]):
            R[f"adamw.out.{n}{i}"] = a.asnumpy()


def svrg():
    x = np.random.RandomState(2).randint(1, 5, (40, 2)).astype(np.float32)
    y = x.dot(np.array([1.0, 2.0], np.float32))
    R["svrg.x"], R["svrg.y"] = x, y
    it = mx.io.NDArrayIter(x, y, batch_size=8, shuffle=False, label_name="lin_reg_label")
    net = mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1, name="fc1"),
        mx.sym.Variable("lin_reg_label"),
        name="lro",
    )
    mod = SVRGModule(net, data_names=["data"], label_names=["lin_reg_label"], update_freq=2)
    mod.fit(
        it,
        eval_metric="mse",
        optimizer="sgd",
        optimizer_params=(("learning_rate", 0.01),),
        initializer=mx.init.One(),
        # two epochs: one full-gradient pass. MXNet's second pass adds the sums to the old
        # full gradient before dividing (it never resets it); gluonjax recomputes it, so
        # later epochs differ on purpose (see tests/module/test_svrg.py)
        num_epoch=2,
        kvstore="local",
    )
    args, _ = mod.get_params()
    R["svrg.fit.w"], R["svrg.fit.b"] = args["fc1_weight"].asnumpy(), args["fc1_bias"].asnumpy()
    R["svrg.fit.full_w"] = mod._param_dict[0]["fc1_weight"].asnumpy()


def composite():
    folder = tempfile.mkdtemp()
    p1, p2 = os.path.join(folder, "e1.txt"), os.path.join(folder, "e2.txt")
    with open(p1, "w") as f:
        f.write("a\t0.1\t0.2\nb\t0.3\t0.4\n<unk>\t9\t9\n")
    with open(p2, "w") as f:
        f.write("b 1 2 3\nc 4 5 6\n")
    e1 = text.embedding.CustomEmbedding(p1, "\t")
    e2 = text.embedding.CustomEmbedding(p2, " ", init_unknown_vec=mx.nd.ones)
    vocab = text.vocab.Vocabulary(Counter("abbccc"), reserved_tokens=["<pad>"])
    ce = text.embedding.CompositeEmbedding(vocab, [e1, e2])
    R["text.composite"] = ce.idx_to_vec.asnumpy()
    R["text.lookup"] = ce.get_vecs_by_tokens(["c", "zz", "A"], lower_case_backup=True).asnumpy()


def main():
    logging.getLogger().setLevel(logging.ERROR)
    mx.random.seed(0)
    group_adagrad()
    multi_adamw()
    svrg()
    composite()
    OUT.mkdir(parents=True, exist_ok=True)
    np.savez(OUT / "ref.npz", **R)
    print(f"wrote {OUT / 'ref.npz'} ({len(R)} arrays)")


if __name__ == "__main__":
    main()
