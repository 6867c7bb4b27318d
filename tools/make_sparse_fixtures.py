"""Record real MXNet 1.9.1 sparse-array results for ``tests/sparse``.

Run with the reference interpreter::

    .venv-mxnet/bin/python tools/make_sparse_fixtures.py [--out FILE]

Output (default ``tests/fixtures/sparse/cases.npz``, and ``arrays.nd`` beside it: an
``mx.nd.save`` file of sparse and dense arrays whose values are ``file.<name>.*`` in
the npz): ``__cases__``, a JSON list of
``{"id", "kind", "args", "result"}`` records, and arrays ``<id>.in<i>`` (inputs)
and ``<id>.<field>`` (outputs). ``result`` holds the output's ``stype``,
``dtype`` and ``shape``; the arrays ``<id>.dense``, ``<id>.indices``,
``<id>.indptr`` and ``<id>.data`` its values and storage. A case that raises in
MXNet records ``{"error": "<exception class>"}``.

Kinds (the test applies the same recipe to gluonjax):

* ``cast``: ``in0.tostype(args.stype)`` from a dense input.
* ``unary``: ``nd.sparse.<args.op>(x, **args.kw)`` with ``x = in0.tostype(args.stype)``.
* ``scalar``: ``x <args.op> args.scalar`` (``op`` one of add sub mul div rsub rdiv neg).
* ``binary``: ``nd.sparse.<args.op>(in0.tostype(s0), in1.tostype(s1))``.
* ``dot``: ``nd.sparse.dot(in0.tostype(s0), in1.tostype(s1), transpose_a=ta)``.
* ``retain``: ``nd.sparse.retain(in0.tostype('row_sparse'), nd.array(args.ids))``.
* ``csr_index``: ``in0.tostype('csr')[key]`` (key an int or [start, stop]).
* ``create``: ``nd.sparse.csr_matrix``/``row_sparse_array`` from ``(data, indices[, indptr])``.
* ``grad_stype``: ``x = nd.zeros(shape, stype=s); x.attach_grad(stype=g)``; ``x.grad.stype``.
* ``dot_grad``: gradient of ``sum(nd.dot(csr, w))`` w.r.t. ``w`` (attached as ``args.w_stype``
  with gradient stype ``args.g_stype``).
* ``embedding_grad``: ``gluon.nn.Embedding(sparse_grad=True)`` gradient for indices ``in1``.
* ``lazy_update``: an Updater of ``args.optimizer`` applied to ``in0`` with the row_sparse
  gradients ``in1..`` (MXNet updates only the stored rows when ``lazy_update``).
* ``kv_compress``: pushes ``in0..`` one by one to a 'device' store with 2-bit
  compression, recording each pulled value as ``<id>.pull<k>``.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "sparse" / "cases.npz"

UNARY = (
    "abs arccos arcsin arcsinh arctan arctanh cbrt ceil cos cosh degrees exp expm1 fix floor "
    "log1p negative radians relu rint round rsqrt sigmoid sign sin sinh sqrt square tan tanh "
    "trunc zeros_like stop_gradient"
).split()


def _inputs():
    r = np.random.RandomState(7)

    def sparse_mat(*shape, keep=0.4):
        a = r.uniform(-2, 2, shape).astype(np.float32)
        return a * (r.uniform(size=shape) < keep)

    m = sparse_mat(5, 4)
    m[2] = 0  # an empty row
    rows = sparse_mat(6, 3, keep=0.9)
    rows[[1, 4]] = 0
    return r, sparse_mat, m, rows


def _cases():
    r, sparse_mat, m, rows = _inputs()
    pos = np.abs(m) + (m != 0) * 0.1  # for ops defined on positive values only
    c = []
    add = lambda cid, kind, args, *ins: c.append((cid, kind, args, list(ins)))  # noqa: E731
    for st in ("row_sparse", "csr"):
        add(f"cast_{st}", "cast", {"stype": st}, m)
    add("cast_rsp_1d", "cast", {"stype": "row_sparse"}, np.array([1.0, 0, 3], np.float32))
    add("cast_rsp_3d", "cast", {"stype": "row_sparse"}, np.stack([rows[:2], rows[2:4]]))
    add("cast_csr_3d", "cast", {"stype": "csr"}, np.zeros((2, 2, 2), np.float32))
    for op in UNARY:
        for st in ("row_sparse", "csr"):
            x = pos if op in ("arccos", "arcsin", "arctanh") else m
            x = x / 4 if op in ("arccos", "arcsin", "arctanh") else x
            add(f"unary_{op}_{st}", "unary", {"op": op, "stype": st, "kw": {}}, x)
    for st in ("row_sparse", "csr"):
        add(
            f"clip_{st}",
            "unary",
            {"op": "clip", "stype": st, "kw": {"a_min": -1.0, "a_max": 1.0}},
            m,
        )
        add(f"sum_{st}", "unary", {"op": "sum", "stype": st, "kw": {"axis": 0}}, m)
        add(f"mean_{st}", "unary", {"op": "mean", "stype": st, "kw": {"axis": 1}}, m)
        for op, s in (("add", 1.5), ("sub", 1.5), ("mul", 2.5), ("div", 4.0), ("rsub", 1.0),
                      ("rdiv", 2.0), ("neg", None)):  # fmt: skip
            add(f"scalar_{op}_{st}", "scalar", {"op": op, "scalar": s, "stype": st}, m)
    other = sparse_mat(5, 4)
    for op in ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "add_n",
               "broadcast_add", "broadcast_mul", "broadcast_sub"):  # fmt: skip
        for s0 in ("default", "row_sparse", "csr"):
            for s1 in ("default", "row_sparse", "csr"):
                b = other + (op == "elemwise_div") * 3.0
                add(f"{op}_{s0}_{s1}", "binary", {"op": op, "stypes": [s0, s1]}, m, b)
    for op in ("elemwise_add", "elemwise_mul"):  # operands storing different rows
        add(f"{op}_rsp_swapped", "binary", {"op": op, "stypes": ["row_sparse"] * 2}, other, m)
    add("broadcast_div_csr_row", "binary", {"op": "broadcast_div", "stypes": ["csr", "default"]},
        m, r.uniform(1, 2, (1, 4)).astype(np.float32))  # fmt: skip
    add("broadcast_mul_csr_row", "binary", {"op": "broadcast_mul", "stypes": ["csr", "default"]},
        m, r.uniform(1, 2, (1, 4)).astype(np.float32))  # fmt: skip
    w = r.uniform(-1, 1, (4, 3)).astype(np.float32)
    wt = r.uniform(-1, 1, (5, 3)).astype(np.float32)
    wt[3] = 0
    for s0 in ("default", "row_sparse", "csr"):
        for s1 in ("default", "row_sparse", "csr"):
            add(f"dot_{s0}_{s1}", "dot", {"stypes": [s0, s1], "transpose_a": False}, m, w)
            add(f"dotT_{s0}_{s1}", "dot", {"stypes": [s0, s1], "transpose_a": True}, m, wt)
    add("dot_dns_csr_T", "dot", {"stypes": ["default", "csr"], "transpose_a": False},
        r.uniform(-1, 1, (2, 5)).astype(np.float32), m)  # fmt: skip
    add("retain_sorted", "retain", {"ids": [0, 2, 3]}, rows)
    add("retain_all", "retain", {"ids": [0, 1, 2, 3, 4, 5]}, rows)
    add("retain_none", "retain", {"ids": [1, 4]}, rows)
    for key in (1, -1, [1, 4], [0, 5], [2, 3]):
        add(f"csr_index_{key}".replace(" ", ""), "csr_index", {"key": key}, m)
    add(
        "create_csr",
        "create",
        {"fn": "csr_matrix", "shape": [3, 4]},
        np.array([1.0, 2.0, 3.0], np.float32),
        np.array([0, 3, 1]),
        np.array([0, 2, 2, 3]),
    )
    add(
        "create_csr_infer",
        "create",
        {"fn": "csr_matrix", "shape": None},
        np.array([1.0, 2.0], np.float32),
        np.array([0, 2]),
        np.array([0, 1, 2]),
    )
    add(
        "create_rsp",
        "create",
        {"fn": "row_sparse_array", "shape": [6, 2]},
        np.array([[1.0, 2.0], [3.0, 4.0]], np.float32),
        np.array([1, 4]),
    )
    add(
        "create_rsp_infer",
        "create",
        {"fn": "row_sparse_array", "shape": None},
        np.array([[1.0, 2.0], [3.0, 4.0]], np.float32),
        np.array([0, 3]),
    )
    for s in ("default", "csr", "row_sparse"):
        for g in (None, "default", "csr", "row_sparse"):
            add(f"grad_stype_{s}_{g}", "grad_stype", {"stype": s, "grad_stype": g})
    lhs = sparse_mat(2, 8, keep=0.5)
    for ws, gs in (("row_sparse", None), ("default", "row_sparse")):
        add(
            f"dot_grad_{ws}",
            "dot_grad",
            {"w_stype": ws, "g_stype": gs},
            lhs,
            np.ones((8, 3), np.float32),
        )
    emb_w = r.uniform(-1, 1, (10, 3)).astype(np.float32)
    add("embedding_grad", "embedding_grad", {}, emb_w, np.array([3, 4, 2, 0, 3], np.float32))
    w0 = r.uniform(-1, 1, (5, 2)).astype(np.float32)
    steps = []
    for rows_present in ([0, 2], [1, 2], [4]):
        g = np.zeros((5, 2), np.float32)
        g[rows_present] = r.uniform(-1, 1, (len(rows_present), 2))
        steps.append(g)
    for name, kw in (
        ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}),
        ("sgd", {"learning_rate": 0.1, "wd": 0.01}),
        ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "lazy_update": False}),
        ("adam", {"learning_rate": 0.1, "wd": 0.01}),
    ):
        cid = f"lazy_{name}_" + "_".join(f"{k}{v}" for k, v in sorted(kw.items()))
        add(cid, "lazy_update", {"optimizer": name, "kw": kw}, w0, *steps)
    pushes = [r.uniform(-1, 1, (6,)).astype(np.float32) for _ in range(3)]
    add("kv_compress", "kv_compress", {"threshold": 0.5}, *pushes)
    _more_cases(add, m, rows)
    return c


def _more_cases(add, m, rows):
    """Storage-type inference of comparisons, take, getnnz, executors; creation checks."""
    ones = (m != 0).astype(np.float32)
    for st in ("row_sparse", "csr"):
        for op in ("eq", "ne", "gt", "ge", "lt", "le"):
            for s in (0.0, 1.0):
                for refl in (False, True):
                    cid = f"cmp_{op}_{int(s)}_{'r' if refl else 'l'}_{st}"
                    add(cid, "scalar_cmp", {"op": op, "scalar": s, "stype": st, "refl": refl}, ones)
    for mode in ("clip", "wrap"):
        add(f"take_csr_{mode}", "take_csr", {"mode": mode, "idx": [4, -2, 7, 0, 2]}, m)
    for axis in (None, 0, 1):
        add(f"getnnz_{axis}", "getnnz", {"axis": axis}, m)
    for name, fn, shape, ins in (
        ("csr_indptr_decreasing", "csr_matrix", [3, 4], ([7.0, 8, 9], [0, 2, 1], [0, 5, 2, 3])),
        ("csr_unsorted_cols", "csr_matrix", [3, 4], ([7.0, 8, 9], [2, 0, 1], [0, 2, 2, 3])),
        ("csr_col_out_of_range", "csr_matrix", [3, 4], ([7.0, 8, 9], [0, 5, 1], [0, 2, 2, 3])),
        ("rsp_unsorted_rows", "row_sparse_array", [4, 1], ([[1.0], [2.0]], [3, 1])),
        ("rsp_row_out_of_range", "row_sparse_array", [4, 1], ([[1.0]], [5])),
    ):
        arrays = [np.asarray(a, np.float32 if k == 0 else np.int64) for k, a in enumerate(ins)]
        add(f"check_{name}", "check_format", {"fn": fn, "shape": shape}, *arrays)
        if "unsorted" in name:
            add(f"value_{name}", "create", {"fn": fn, "shape": shape}, *arrays)
    x, w = m, np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    add("fc_bias_column", "fc", {}, x, w, np.arange(3, dtype=np.float32).reshape(3, 1))
    probs = np.full((5, 4), 0.25, np.float32)
    add("softmax_prob_label", "softmax_prob", {}, m, probs)
    for op in ("relu", "sigmoid", "abs", "exp"):
        for st in ("row_sparse", "csr"):
            add(f"sym_{op}_{st}", "sym_unary", {"op": op, "stype": st}, m)
    for sg in (True, False):
        for ws in ("default", "row_sparse"):
            add(f"sym_embedding_grad_{sg}_{ws}", "sym_embedding_grad",
                {"sparse_grad": sg, "w_stype": ws}, rows, np.array([5.0, 0, 2, 0]))  # fmt: skip
    for fg in (True, False):
        add(f"bn_rsp_fix_gamma_{fg}", "bn_sparse", {"fix_gamma": fg}, m)
    add("gamma_grad_poles", "special_grad", {"op": "gamma"}, np.array([0.0, 1.5, 3, -0.5]))
    add("gammaln_grad_poles", "special_grad", {"op": "gammaln"}, np.array([0.0, 1.5, 3, -0.5]))


def _record(mx, cid, kind, args, ins):
    nd = mx.nd
    if kind == "cast":
        return nd.array(ins[0]).tostype(args["stype"])
    if kind == "unary":
        x = nd.array(ins[0]).tostype(args["stype"])
        return getattr(nd.sparse, args["op"])(x, **args["kw"])
    if kind == "scalar":
        x, s = nd.array(ins[0]).tostype(args["stype"]), args["scalar"]
        return {
            "add": lambda: x + s,
            "sub": lambda: x - s,
            "mul": lambda: x * s,
            "div": lambda: x / s,
            "rsub": lambda: s - x,
            "rdiv": lambda: s / x,
            "neg": lambda: -x,
        }[args["op"]]()
    if kind == "binary":
        a, b = (nd.array(v).tostype(s) for v, s in zip(ins, args["stypes"]))
        return getattr(nd.sparse, args["op"])(a, b)
    if kind == "dot":
        a, b = (nd.array(v).tostype(s) for v, s in zip(ins, args["stypes"]))
        return nd.sparse.dot(a, b, transpose_a=args["transpose_a"])
    if kind == "retain":
        return nd.sparse.retain(nd.array(ins[0]).tostype("row_sparse"), nd.array(args["ids"]))
    if kind == "csr_index":
        x, key = nd.array(ins[0]).tostype("csr"), args["key"]
        return x[key] if isinstance(key, int) else x[key[0] : key[1]]
    if kind == "create":
        fn = getattr(nd.sparse, args["fn"])
        shape = tuple(args["shape"]) if args["shape"] else None
        return fn(tuple(ins), shape=shape)
    if kind == "grad_stype":
        x = nd.zeros((2, 2), stype=args["stype"])
        x.attach_grad(stype=args["grad_stype"])
        return x.grad
    if kind == "dot_grad":
        lhs = nd.array(ins[0]).tostype("csr")
        w = nd.array(ins[1]).tostype(args["w_stype"])
        w.attach_grad(stype=args["g_stype"])
        with mx.autograd.record():
            y = nd.dot(lhs, w)
        y.backward()
        return w.grad
    if kind == "embedding_grad":
        layer = mx.gluon.nn.Embedding(10, 3, sparse_grad=True)
        layer.initialize()
        layer.weight.set_data(nd.array(ins[0]))
        with mx.autograd.record():
            y = (layer(nd.array(ins[1])) * 2).sum()
        y.backward()
        return layer.weight.grad()
    if kind == "lazy_update":
        upd = mx.optimizer.get_updater(mx.optimizer.create(args["optimizer"], **args["kw"]))
        w = nd.array(ins[0])
        for g in ins[1:]:
            upd(0, nd.array(g).tostype("row_sparse"), w)
        return w
    if kind == "kv_compress":
        kv = mx.kv.create("device")
        kv.set_gradient_compression({"type": "2bit", "threshold": args["threshold"]})
        kv.init(0, nd.zeros(ins[0].shape))
        pulls = []
        for v in ins:
            kv.push(0, nd.array(v))
            out = nd.zeros(v.shape)
            kv.pull(0, out=out)
            pulls.append(out.asnumpy())
        return pulls
    return _record_more(mx, kind, args, ins)


def _record_more(mx, kind, args, ins):
    """The recipes of ``_more_cases`` (the same in ``tests/sparse/test_sparse_vs_mxnet.py``)."""
    import operator

    nd = mx.nd
    if kind == "scalar_cmp":
        x, s = nd.array(ins[0]).tostype(args["stype"]), args["scalar"]
        fn = getattr(operator, args["op"])
        return fn(s, x) if args["refl"] else fn(x, s)
    if kind == "take_csr":
        x = nd.array(ins[0]).tostype("csr")
        return nd.take(x, nd.array(args["idx"]), mode=args["mode"])
    if kind == "getnnz":
        return nd.contrib.getnnz(nd.array(ins[0]).tostype("csr"), axis=args["axis"])
    if kind == "check_format":
        a = getattr(nd.sparse, args["fn"])(tuple(ins), shape=tuple(args["shape"]))
        a.check_format()
        return a
    if kind == "fc":
        return nd.FullyConnected(*(nd.array(v) for v in ins), num_hidden=ins[1].shape[0])
    if kind == "softmax_prob":
        x, lab = mx.sym.var("x"), mx.sym.var("lab")
        grad = nd.zeros(ins[0].shape)
        ex = mx.sym.SoftmaxOutput(x, lab).bind(
            mx.cpu(), {"x": nd.array(ins[0]), "lab": nd.array(ins[1])}, args_grad={"x": grad}
        )
        ex.forward(is_train=True)
        ex.backward()
        return grad
    if kind == "sym_unary":
        y = getattr(mx.sym, args["op"])(mx.sym.var("data"))
        ex = y.bind(mx.cpu(), {"data": nd.array(ins[0]).tostype(args["stype"])})
        return ex.forward()[0]
    if kind == "sym_embedding_grad":
        w = mx.sym.var("w", stype=args["w_stype"])
        y = mx.sym.Embedding(mx.sym.var("data"), w, input_dim=6, output_dim=3,
                             sparse_grad=args["sparse_grad"])  # fmt: skip
        ex = y.simple_bind(mx.cpu(), grad_req={"data": "null", "w": "write"}, data=(4,))
        ex.arg_dict["w"][:] = nd.array(ins[0]).tostype(args["w_stype"])
        ex.arg_dict["data"][:] = nd.array(ins[1])
        ex.forward(is_train=True)
        ex.backward([nd.ones((4, 3))])
        return ex.grad_dict["w"]
    if kind == "bn_sparse":
        y = mx.sym.BatchNorm(mx.sym.var("data", stype="row_sparse"), fix_gamma=args["fix_gamma"])
        c = ins[0].shape[1]
        args_ = {"data": nd.array(ins[0]).tostype("row_sparse")}
        args_.update({n: nd.ones((c,)) for n in y.list_arguments() if n != "data"})
        aux = {n: nd.ones((c,)) for n in y.list_auxiliary_states()}
        return y.bind(mx.cpu(), args_, aux_states=aux).forward()[0]
    if kind == "special_grad":
        x = nd.array(ins[0])
        x.attach_grad()
        with mx.autograd.record():
            y = getattr(nd, args["op"])(x)
        y.backward()
        return x.grad
    raise ValueError(kind)


def _save_file(mx, path):
    """``mx.nd.save`` of sparse and dense arrays; returns their values as ``file.<name>.*``."""
    _, _, m, rows = _inputs()
    nd = mx.nd
    saved = {
        "csr": nd.array(m).tostype("csr"),
        "rsp": nd.array(rows).tostype("row_sparse"),
        "csr_empty": nd.sparse.zeros("csr", (3, 4)),
        "rsp_empty": nd.sparse.zeros("row_sparse", (2, 5)),
        "dense": nd.array(rows),
    }
    nd.save(str(path), saved)
    out = {}
    for name, a in saved.items():
        _, got = _result(a)
        out.update({f"file.{name}.{k}": v for k, v in got.items()})
    return out


def _result(out):
    """(result record, arrays) of one output, read back in full (MXNet runs lazily)."""
    if isinstance(out, list):
        return {"pulls": len(out)}, {f"pull{k}": v for k, v in enumerate(out)}
    res = {"stype": out.stype, "dtype": np.dtype(out.dtype).name, "shape": list(out.shape)}
    got = {"dense": out.asnumpy()}
    if out.stype != "default":
        got["indices"] = out.indices.asnumpy()
        got["data"] = out.data.asnumpy()
    if out.stype == "csr":
        got["indptr"] = out.indptr.asnumpy()
    return res, got


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()
    os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
    import mxnet as mx

    mx.random.seed(0)
    records, arrays = [], {}
    for cid, kind, cargs, ins in _cases():
        for i, a in enumerate(ins):
            arrays[f"{cid}.in{i}"] = np.asarray(a)
        try:
            res, got = _result(_record(mx, cid, kind, cargs, ins))
        except Exception as err:  # noqa: BLE001 - the error class is the recorded result
            res, got = {"error": type(err).__name__}, {}
        arrays.update({f"{cid}.{k}": v for k, v in got.items()})
        records.append({"id": cid, "kind": kind, "args": cargs, "result": res})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    arrays.update(_save_file(mx, args.out.parent / "arrays.nd"))
    meta = np.frombuffer(json.dumps(records).encode(), np.uint8)
    np.savez_compressed(args.out, __cases__=meta, **arrays)
    print(f"wrote {len(records)} cases to {args.out}")


if __name__ == "__main__":
    main()
