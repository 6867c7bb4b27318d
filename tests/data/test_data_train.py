"""A LeNet trains on MNIST-format files through DataLoader(num_workers=2)."""

from __future__ import annotations

import gzip
import struct

import numpy as np

import gluonjax as mx
from gluonjax import autograd, gluon
from gluonjax.data import digits
from gluonjax.gluon import nn
from gluonjax.gluon.data.vision import MNIST, transforms


def _write_idx(folder, prefix, images, labels):
    n = len(labels)
    with gzip.open(folder / f"{prefix}-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())
    with gzip.open(folder / f"{prefix}-labels-idx1-ubyte.gz", "wb") as f:
        f.write(struct.pack(">II", 2049, n) + labels.tobytes())


def test_lenet_on_mnist_files_with_worker_processes(tmp_path, recwarn):
    # a small LeNet (one convolution): jax compiles its training step in a few seconds,
    # and then epochs are cheap, so it trains for several epochs through the workers
    for split, prefix in (("train", "train"), ("test", "t10k")):
        x, y = digits(split)
        x, y = (x[:960], y[:960]) if split == "train" else (x, y)
        _write_idx(tmp_path, prefix, (x[:, 0] * 255).astype(np.uint8), y.astype(np.uint8))
    to_tensor = transforms.ToTensor()
    train = MNIST(root=str(tmp_path)).transform_first(to_tensor)
    test = MNIST(root=str(tmp_path), train=False).transform_first(to_tensor)
    loader = gluon.data.DataLoader(train, batch_size=64, shuffle=True, num_workers=2)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 5, activation="relu"), nn.MaxPool2D(4), nn.Dense(10))
    mx.random.seed(0)
    np.random.seed(0)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for _ in range(8):
        for data, label in loader:
            with autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(data.shape[0])
    correct = total = 0
    for data, label in gluon.data.DataLoader(test, batch_size=100):
        pred = net(data).argmax(axis=1).asnumpy()
        correct += int((pred == label.asnumpy()).sum())
        total += len(pred)
    assert total == 300 and correct / total > 0.9, correct / total
    assert not [w for w in recwarn if "threads" in str(w.message)]
    assert loader._pool is not None and not loader._thread_pool  # worker processes did it
