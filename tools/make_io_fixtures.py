"""Record MXNet 1.9.1's NDArrayIter batches (run with .venv-mxnet/bin/python).

Writes tests/fixtures/io/ndarrayiter.json: for each case (number of samples,
batch size, last_batch_handle, epochs) the batches of every epoch (first
column of the data, the labels, pad) and provide_data/provide_label.
"""

import json
import os

import mxnet as mx
import numpy as np

CASES = [
    (10, 4, "pad"),
    (10, 4, "discard"),
    (10, 4, "roll_over"),
    (9, 3, "pad"),
    (9, 3, "roll_over"),
    (7, 3, "roll_over"),
    (3, 4, "pad"),
    (5, 2, "discard"),
    (11, 4, "roll_over"),
]


def run(n, bs, handle, epochs=4):
    data = np.arange(n * 2).reshape(n, 2).astype("int64")
    it = mx.io.NDArrayIter(data, np.arange(n) + 100, batch_size=bs, last_batch_handle=handle)

    def descs(lst):
        return [[d.name, list(d.shape), np.dtype(d.dtype).name] for d in lst]

    out = {
        "n": n,
        "batch_size": bs,
        "last_batch_handle": handle,
        "epochs": [],
        "provide_data": descs(it.provide_data),
        "provide_label": descs(it.provide_label),
    }
    for _ in range(epochs):
        batches = []
        for b in it:
            batches.append(
                {
                    "data": b.data[0].asnumpy()[:, 0].tolist(),
                    "label": b.label[0].asnumpy().tolist(),
                    "pad": int(b.pad),
                }
            )
        out["epochs"].append(batches)
        it.reset()
    return out


def main():
    root = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "io")
    os.makedirs(root, exist_ok=True)
    cases = [run(*c) for c in CASES]
    multi = mx.io.NDArrayIter(
        {"b": np.ones((4, 3)), "a": np.ones((4, 1))}, [np.ones((4,)), np.ones((4, 2))], batch_size=2
    )
    names = {
        "provide_data": [[d.name, list(d.shape)] for d in multi.provide_data],
        "provide_label": [[d.name, list(d.shape)] for d in multi.provide_label],
    }
    with open(os.path.join(root, "ndarrayiter.json"), "w") as f:
        json.dump({"cases": cases, "names": names}, f, indent=0)


if __name__ == "__main__":
    main()
