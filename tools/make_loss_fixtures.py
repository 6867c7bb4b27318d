"""Record real MXNet 1.9.1 Gluon loss results for ``tests/gluon/test_loss.py``.

Run with the reference interpreter::

    .venv-mxnet/bin/python tools/make_loss_fixtures.py [--out FILE]

Every case builds ``mx.gluon.loss.<cls>(**kwargs)``, calls it eagerly under
``autograd.record()`` on fixed-seed inputs (``None`` inputs are passed as
``None``), back-propagates a random head gradient and stores, in one npz
(default ``tests/fixtures/losses.npz``):

* ``__cases__``: JSON list of ``{"id", "cls", "kwargs", "inputs", "grads"}``
  (``inputs``: one entry per positional input, ``null`` for ``None``; ``grads``:
  indices of the inputs whose gradient is recorded; empty where MXNet cannot
  record the loss, e.g. ``PoissonNLLLoss(compute_full=True)`` uses ``*=``);
* ``<id>.in<i>``, ``<id>.out``, ``<id>.head``, ``<id>.grad<i>``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "losses.npz"


def _rng(seed):
    return np.random.RandomState(seed)


def f32(a):
    return np.asarray(a, np.float32)


def _cases():
    """(id, cls, kwargs, inputs, grad indices)."""
    r = _rng(0)
    n = lambda *s: f32(r.randn(*s))  # noqa: E731
    u = lambda lo, hi, *s: f32(r.uniform(lo, hi, s))  # noqa: E731
    sign = lambda *s: f32(np.where(r.rand(*s) > 0.5, 1.0, -1.0))  # noqa: E731
    binary = lambda *s: f32(r.rand(*s) > 0.5)  # noqa: E731
    cls = lambda k, *s: f32(r.randint(0, k, s))  # noqa: E731
    sw = lambda *s: u(0.5, 1.5, *s)  # noqa: E731

    def probs(*s):
        e = np.exp(r.randn(*s))
        return f32(e / e.sum(-1, keepdims=True))

    c = []
    add = lambda *a: c.append(a)  # noqa: E731
    # regression
    add("l2", "L2Loss", {}, [n(4, 3), n(4, 3)], [0, 1])
    add("l2_w_sw", "L2Loss", {"weight": 0.7}, [n(4, 3), n(4, 3), sw(4, 1)], [0, 1, 2])
    add("l2_flatlabel", "L2Loss", {}, [n(4, 3), n(12)], [0, 1])
    add("l2_batch1", "L2Loss", {"batch_axis": 1}, [n(3, 4, 2), n(3, 4, 2)], [0, 1])
    add("l1", "L1Loss", {}, [n(4, 3), n(4, 3)], [0, 1])
    add("l1_w_sw", "L1Loss", {"weight": 2.0}, [n(2, 3, 2), n(2, 3, 2), sw(2, 1, 1)], [0, 1, 2])
    add("huber", "HuberLoss", {}, [n(4, 5) * 2, n(4, 5)], [0, 1])
    add("huber_rho", "HuberLoss", {"rho": 0.5, "weight": 1.5}, [n(4, 5), n(4, 5), sw(4, 1)], [0, 1])
    # binary classification
    add("sbce", "SigmoidBinaryCrossEntropyLoss", {}, [n(4, 3) * 3, binary(4, 3)], [0, 1])
    add("sbce_sw", "SigmoidBCELoss", {"weight": 0.5}, [n(4, 3), binary(4, 3), sw(4, 1)], [0, 1, 2])
    add("sbce_pos", "SigmoidBCELoss", {}, [n(4, 3), binary(4, 3), None, u(0.5, 3, 1, 3)], [0, 1, 3])
    add(
        "sbce_pos_sw", "SigmoidBCELoss", {}, [n(4, 3), binary(4, 3), sw(4, 1), u(0.5, 3, 4, 3)], [0]
    )
    add(
        "sbce_sig",
        "SigmoidBCELoss",
        {"from_sigmoid": True},
        [u(0.05, 0.95, 4, 3), binary(4, 3)],
        [0, 1],
    )
    add(
        "sbce_sig_pos",
        "SigmoidBCELoss",
        {"from_sigmoid": True},
        [u(0.05, 0.95, 4, 3), binary(4, 3), None, u(0.5, 3, 1, 3)],
        [0, 1, 3],
    )
    add("hinge", "HingeLoss", {}, [n(5, 3), sign(5, 3)], [0])
    add("hinge_m2", "HingeLoss", {"margin": 2, "weight": 0.5}, [n(5, 3), sign(5, 3), sw(5, 1)], [0])
    add("sqhinge", "SquaredHingeLoss", {}, [n(5, 3), sign(5, 3)], [0])
    add("sqhinge_m", "SquaredHingeLoss", {"margin": 0.5}, [n(5, 3), sign(5, 3), sw(5, 1)], [0])
    add("logistic", "LogisticLoss", {}, [n(5, 3) * 2, sign(5, 3)], [0])
    add(
        "logistic_bin",
        "LogisticLoss",
        {"label_format": "binary"},
        [n(5, 3) * 2, binary(5, 3), sw(5, 1)],
        [0],
    )
    # multi-class
    add("sce", "SoftmaxCrossEntropyLoss", {}, [n(4, 5), cls(5, 4)], [0])
    add("sce_sw", "SoftmaxCELoss", {"weight": 0.3}, [n(4, 5), cls(5, 4), sw(4, 1)], [0, 2])
    add("sce_axis1", "SoftmaxCELoss", {"axis": 1}, [n(2, 3, 4), cls(3, 2, 4)], [0])
    add("sce_dense", "SoftmaxCELoss", {"sparse_label": False}, [n(4, 5), probs(4, 5)], [0, 1])
    add(
        "sce_logits",
        "SoftmaxCELoss",
        {"from_logits": True},
        [f32(np.log(probs(4, 5))), cls(5, 4)],
        [0],
    )
    add("sce_seq", "SoftmaxCELoss", {}, [n(2, 3, 5), cls(5, 2, 3)], [0])
    add("kl", "KLDivLoss", {}, [f32(np.log(probs(4, 5))), probs(4, 5)], [0, 1])
    add(
        "kl_nologits",
        "KLDivLoss",
        {"from_logits": False, "weight": 2.0},
        [n(4, 5), probs(4, 5), sw(4, 1)],
        [0, 1],
    )
    add(
        "kl_axis1",
        "KLDivLoss",
        {"from_logits": False, "axis": 1},
        [n(2, 3, 2), probs(2, 2, 3).transpose(0, 2, 1).copy()],
        [0],
    )
    # embeddings
    add("triplet", "TripletLoss", {}, [n(4, 3), n(4, 3), n(4, 3)], [0, 1, 2])
    add(
        "triplet_m",
        "TripletLoss",
        {"margin": 3, "weight": 0.5},
        [n(4, 2, 2), n(4, 2, 2), n(4, 2, 2)],
        [0, 1, 2],
    )
    add("cosine", "CosineEmbeddingLoss", {}, [n(4, 5), n(4, 5), sign(4)], [0, 1])
    add(
        "cosine_m",
        "CosineEmbeddingLoss",
        {"margin": 0.2},
        [n(6, 3), n(6, 3), sign(6), sw(6, 1)],
        [0, 1],
    )
    add("sdml", "SDMLLoss", {}, [n(4, 3), n(4, 3)], [0, 1])
    add("sdml_s", "SDMLLoss", {"smoothing_parameter": 0.1}, [n(5, 2), n(5, 2)], [0, 1])
    # counts
    add("poisson", "PoissonNLLLoss", {}, [n(4, 3) * 0.5, f32(r.poisson(2, (4, 3)))], [0])
    add(
        "poisson_nologits",
        "PoissonNLLLoss",
        {"from_logits": False},
        [u(0.5, 3, 4, 3), f32(r.poisson(2, (4, 3))), sw(4, 1)],
        [0],
    )
    add(
        "poisson_full",
        "PoissonNLLLoss",
        {"compute_full": True},
        [n(4, 3) * 0.5, f32(r.randint(1, 6, (4, 3)))],
        [],
    )  # MXNet cannot record it
    # sequences
    ctc_label = f32([[0, 1, 1], [2, 0, -1]])
    add("ctc", "CTCLoss", {}, [n(2, 6, 4), ctc_label], [0])
    add(
        "ctc_tnc",
        "CTCLoss",
        {"layout": "TNC", "label_layout": "TN"},
        [n(6, 2, 4), ctc_label.T.copy()],
        [0],
    )
    add(
        "ctc_lengths",
        "CTCLoss",
        {"weight": 0.5},
        [
            n(3, 7, 5),
            f32([[0, 1, 2, 3], [3, 3, 0, 0], [1, 0, 0, 0]]),
            f32([7, 5, 6]),
            f32([4, 2, 1]),
            sw(3),
        ],
        [0],
    )
    add(
        "ctc_predlen", "CTCLoss", {}, [n(2, 5, 3), f32([[0, 1, -1], [1, -1, -1]]), f32([4, 5])], [0]
    )
    add(
        "ctc_labellen",
        "CTCLoss",
        {"layout": "TNC"},
        [n(5, 2, 3), f32([[0, 1, 1], [1, 0, 0]]), None, f32([3, 1])],
        [0],
    )
    return c


def main():
    import mxnet as mx

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    out_path = Path(ap.parse_args().out)
    arrays, meta = {}, []
    head_rng = _rng(7)
    for cid, cls, kwargs, inputs, grads in _cases():
        block = getattr(mx.gluon.loss, cls)(**kwargs)
        nds = [None if a is None else mx.nd.array(a) for a in inputs]
        for i in grads:
            nds[i].attach_grad()
        if grads:
            with mx.autograd.record():
                out = block(*nds)
        else:
            out = block(*nds)
        head = f32(head_rng.randn(*out.shape))
        if grads:
            out.backward(mx.nd.array(head))
        for i, a in enumerate(inputs):
            if a is not None:
                arrays[f"{cid}.in{i}"] = a
        arrays[f"{cid}.out"] = out.asnumpy()
        arrays[f"{cid}.head"] = head
        for i in grads:
            arrays[f"{cid}.grad{i}"] = nds[i].grad.asnumpy()
        meta.append(
            {
                "id": cid,
                "cls": cls,
                "kwargs": kwargs,
                "inputs": [None if a is None else list(a.shape) for a in inputs],
                "grads": grads,
            }
        )
    arrays["__cases__"] = np.array(json.dumps(meta))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out_path, **arrays)
    print(f"wrote {len(meta)} cases to {out_path}")


if __name__ == "__main__":
    main()
