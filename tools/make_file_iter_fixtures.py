"""Record MXNet 1.9.1's LibSVMIter and CSVIter passes (run with .venv-mxnet/bin/python).

Writes tests/fixtures/io/file_iters.json:

* ``libsvm``: the text of a small LibSVM data file and label file, and for each case (a
  batch size and a script of steps) what every pass served: per batch the CSR parts of
  ``data`` (indptr, indices, values), the label (dense, or CSR parts) and ``pad``. The
  steps are ``pass`` (read to the end), ``take k`` (read k batches) and ``reset``;
  they show where a pass after a wrapping last batch begins, and which resets rewind
  (MXNet's loader thread reads up to 16 batches ahead of the consumer).
* ``csv``: the same for CSVIter (first column of the data, labels, pad), with
  ``round_batch`` True and False (the pad rows of a last batch with nothing served
  before it hold uninitialized memory in MXNet, so no case has fewer rows than a batch).
* ``score``: a linear model over CSR data (``sparse.dot`` with a row_sparse weight,
  SoftmaxOutput) with fixed parameters, and the ``nll_loss`` that ``Module.score``
  reports on LibSVMIter batches in the order train.py of
  example/sparse/linear_classification uses: score, reset, score, reset, score.

MXNet's loader runs in a thread; the script waits a little before each reset so that
the thread has read as far ahead as it will.
"""

import json
import os
import time

import mxnet as mx
import numpy as np

WAIT = 0.2


def libsvm_text(n, width, seed, label_col=True):
    rs = np.random.RandomState(seed)
    lines = []
    for i in range(n):
        k = rs.randint(0, 4)
        cols = np.sort(rs.choice(width, k, replace=False))
        vals = rs.randint(-9, 10, size=k) / 4.0  # exact in float32, zeros included
        label = f"{i % 2}" if label_col else "0"
        lines.append(" ".join([label] + [f"{c}:{v}" for c, v in zip(cols, vals)]))
    return "\n".join(lines) + "\n"


def csr_parts(a):
    return {
        "indptr": a.indptr.asnumpy().tolist(),
        "indices": a.indices.asnumpy().tolist(),
        "values": a.data.asnumpy().tolist(),
    }


def run_steps(it, steps, record):
    passes = []
    for step in steps:
        if step == "reset":
            time.sleep(WAIT)
            it.reset()
            continue
        if step == "pass":
            batches = [record(b) for b in it]
        else:
            k = int(step.split()[1])
            batches = [record(it.next()) for _ in range(k)]
        passes.append({"step": step, "batches": batches})
        time.sleep(WAIT)
    return passes


LIBSVM_CASES = [
    # (rows, batch size, label file?, steps)
    (7, 3, False, ["pass", "reset", "pass", "reset", "pass", "reset", "pass", "pass"]),
    (7, 3, False, ["reset", "pass", "reset", "reset", "pass"]),
    (8, 4, False, ["pass", "reset", "pass"]),
    (2, 3, False, ["pass", "reset", "pass", "reset", "pass", "reset", "pass"]),
    (5, 3, True, ["pass", "reset", "pass", "reset", "pass"]),
    (39, 2, False, ["take 3", "reset", "take 2", "reset", "take 4", "reset", "pass"]),
]


def libsvm_cases(root):
    width = 6
    out = []
    for n, bs, with_label, steps in LIBSVM_CASES:
        data_text = libsvm_text(n, width, seed=n + 10)
        label_text = libsvm_text(n, 3, seed=100 + n, label_col=False) if with_label else None
        with open(os.path.join(root, "d.svm"), "w") as f:
            f.write(data_text)
        kwargs = {"data_libsvm": os.path.join(root, "d.svm"), "data_shape": (width,)}
        if with_label:
            with open(os.path.join(root, "l.svm"), "w") as f:
                f.write(label_text)
            kwargs.update(label_libsvm=os.path.join(root, "l.svm"), label_shape=(3,))
        it = mx.io.LibSVMIter(batch_size=bs, **kwargs)

        def record(b):
            lab = b.label[0]
            return {
                "data": csr_parts(b.data[0]),
                "label": csr_parts(lab) if lab.stype == "csr" else lab.asnumpy().tolist(),
                "pad": int(b.pad),
            }

        out.append(
            {
                "width": width,
                "label_width": 3 if with_label else None,
                "batch_size": bs,
                "data_text": data_text,
                "label_text": label_text,
                "steps": steps,
                "passes": run_steps(it, steps, record),
            }
        )
    return out


CSV_CASES = [
    (7, 3, True, ["pass", "reset", "pass", "reset", "pass", "reset", "pass"]),
    (7, 3, False, ["pass", "reset", "take 2", "reset", "pass"]),
]


def csv_cases(root):
    out = []
    for n, bs, round_batch, steps in CSV_CASES:
        data_text = "".join(f"{i + 1},{-i}\n" for i in range(n))
        label_text = "".join(f"{10 + i}\n" for i in range(n))
        for name, text in (("d.csv", data_text), ("l.csv", label_text)):
            with open(os.path.join(root, name), "w") as f:
                f.write(text)
        it = mx.io.CSVIter(
            data_csv=os.path.join(root, "d.csv"),
            data_shape=(2,),
            label_csv=os.path.join(root, "l.csv"),
            batch_size=bs,
            round_batch=round_batch,
        )

        def record(b):
            return {
                "data": b.data[0].asnumpy()[:, 0].tolist(),
                "label": b.label[0].asnumpy().ravel().tolist(),
                "pad": int(b.pad),
            }

        out.append(
            {
                "batch_size": bs,
                "round_batch": round_batch,
                "data_text": data_text,
                "label_text": label_text,
                "steps": steps,
                "passes": run_steps(it, steps, record),
            }
        )
    return out


def score_case(root):
    n, width, bs = 11, 6, 4
    rs = np.random.RandomState(7)
    text = libsvm_text(n, width, seed=3)
    with open(os.path.join(root, "s.svm"), "w") as f:
        f.write(text)
    weight = rs.randn(width, 2).round(2).astype("float32")
    bias = np.array([0.1, -0.2], "float32")
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", shape=(width, 2), stype="row_sparse")
    b = mx.sym.Variable("bias", shape=(2,))
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(x, w), b)
    net = mx.sym.SoftmaxOutput(pred, mx.sym.Variable("softmax_label"), name="out")
    it = mx.io.LibSVMIter(
        data_libsvm=os.path.join(root, "s.svm"), data_shape=(width,), batch_size=bs
    )
    mod = mx.mod.Module(net, data_names=["data"], label_names=["softmax_label"])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label, for_training=False)
    mod.init_params(
        arg_params={"weight": mx.nd.array(weight).tostype("row_sparse"), "bias": mx.nd.array(bias)}
    )
    nll = []
    for _ in range(3):
        time.sleep(WAIT)
        nll.append(float(mod.score(it, ["nll_loss"])[0][1]))
        time.sleep(WAIT)
        it.reset()
    return {
        "batch_size": bs,
        "width": width,
        "data_text": text,
        "weight": weight.tolist(),
        "bias": bias.tolist(),
        "nll": nll,
    }


def main():
    root = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "io")
    tmp = os.path.join(root, "_tmp_file_iters")
    os.makedirs(tmp, exist_ok=True)
    try:
        out = {"libsvm": libsvm_cases(tmp), "csv": csv_cases(tmp), "score": score_case(tmp)}
    finally:
        for f in os.listdir(tmp):
            os.remove(os.path.join(tmp, f))
        os.rmdir(tmp)
    with open(os.path.join(root, "file_iters.json"), "w") as f:
        json.dump(out, f, indent=0)


if __name__ == "__main__":
    main()
