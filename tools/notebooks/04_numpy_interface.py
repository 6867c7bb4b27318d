# ruff: noqa: E402, E501, B018, B905
# %% [markdown]
# # MXNet's NumPy interface: `np` and `npx`
#
# The MXNet edition of *Dive into Deep Learning* writes its code against MXNet's NumPy
# interface: `from mxnet import np, npx` and `npx.set_np()`. This notebook follows the flow of
# its chapters 2-6 with `import gluonjax as mx`:
#
# 1. arrays: creation, broadcasting, indexing, conversion to NumPy;
# 2. automatic differentiation;
# 3. linear regression from scratch;
# 4. a concise LeNet in NumPy mode, hybridized, trained on the handwritten digits that ship
#    with gluonjax (`gluonjax.data.digits`), with its loss plot;
# 5. export and load back.
#
# Everything is computed here, in this notebook.

# %%
import io
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as onp
from IPython.display import Image, display

import gluonjax as mx
from gluonjax import autograd, gluon, np, npx
from gluonjax.data import batches, digits
from gluonjax.gluon import nn

npx.set_np()
mx.random.seed(0)


def show_figure(fig):
    """Display a matplotlib figure as a PNG, whatever the matplotlib backend is."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
    plt.close(fig)
    display(Image(buf.getvalue()))


# %% [markdown]
# ## 1. Arrays
#
# `np.ndarray` follows NumPy: broadcasting, type promotion, 0-d results, integer and boolean
# indexing. MXNet's default dtype is float32, also for `np.arange` and Python lists.

# %%
x = np.arange(12)
X = x.reshape(3, 4)
print(x.dtype, X.shape, X[1], X[1, 2], X[X > 8])
Y = np.array([[2, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
print(np.concatenate([X, Y], axis=0).shape, (X == Y).sum(), X + np.arange(4))
A = X.asnumpy()
print(type(A), type(np.array(A)), X.sum(axis=1).tolist())

# %% [markdown]
# ## 2. Automatic differentiation
#
# `attach_grad`, `autograd.record()` and `backward()` work on `np.ndarray` as on `nd.NDArray`;
# the gradient is an `np.ndarray` too.

# %%
x = np.arange(4.0)
x.attach_grad()
with autograd.record():
    y = 2 * np.dot(x, x)
y.backward()
print(x.grad, x.grad == 4 * x)

# %% [markdown]
# ## 3. Linear regression from scratch

# %%
true_w, true_b = np.array([2.0, -3.4]), 4.2
features = np.random.normal(0, 1, (1000, 2))
labels = np.dot(features, true_w) + true_b + np.random.normal(0, 0.01, (1000,))

w = np.random.normal(0, 0.01, (2, 1))
b = np.zeros(1)
w.attach_grad()
b.attach_grad()


def linreg(X, w, b):
    return np.dot(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


lr, batch_size = 0.03, 10
for epoch in range(3):
    for i in range(0, 1000, batch_size):
        X_b, y_b = features[i : i + batch_size], labels[i : i + batch_size]
        with autograd.record():
            loss = squared_loss(linreg(X_b, w, b), y_b)
        loss.backward()
        w[:] = w - lr * w.grad / batch_size
        b[:] = b - lr * b.grad / batch_size
    print(f"epoch {epoch + 1}, loss {float(squared_loss(linreg(features, w, b), labels).mean()):f}")
print("error in w:", (true_w - w.reshape(true_w.shape)).tolist(), "error in b:", true_b - b.item())

# %% [markdown]
# ## 4. A concise LeNet in NumPy mode
#
# Gluon's layers take and return `np.ndarray` in NumPy mode; `hybrid_forward(F, x)` uses
# `F.np` and `F.npx`. `hybridize()` compiles the whole network with `jax.jit`.

# %%
x_train, y_train = digits("train")
x_test, y_test = digits("test")


class LeNet(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv1 = nn.Conv2D(6, kernel_size=5, activation="sigmoid")
            self.pool1 = nn.AvgPool2D(pool_size=2, strides=2)
            self.conv2 = nn.Conv2D(16, kernel_size=5, activation="sigmoid")
            self.pool2 = nn.AvgPool2D(pool_size=2, strides=2)
            self.fc1 = nn.Dense(120, activation="sigmoid")
            self.fc2 = nn.Dense(84, activation="sigmoid")
            self.fc3 = nn.Dense(10)

    def hybrid_forward(self, F, x):
        x = self.pool2(self.conv2(self.pool1(self.conv1(x))))
        x = F.npx.batch_flatten(x)
        return self.fc3(self.fc2(self.fc1(x)))


net = LeNet()
net.initialize(mx.init.Xavier())
net.hybridize()
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})


def accuracy(net, xs, ys):
    hits = 0
    for xb, yb in batches(xs, ys, 256):
        hits += int((net(np.array(xb)).argmax(axis=1) == np.array(yb)).sum())
    return hits / len(xs)


history = {"loss": [], "train_acc": [], "test_acc": []}
start = time.perf_counter()
for epoch in range(8):
    total, count = 0.0, 0
    for xb, yb in batches(x_train, y_train, 64, shuffle=True, seed=epoch, last_batch="discard"):
        X_b, y_b = np.array(xb), np.array(yb)
        with autograd.record():
            loss = loss_fn(net(X_b), y_b)
        loss.backward()
        trainer.step(X_b.shape[0])
        total += float(loss.sum())
        count += X_b.shape[0]
    history["loss"].append(total / count)
    history["train_acc"].append(accuracy(net, x_train, y_train))
    history["test_acc"].append(accuracy(net, x_test, y_test))
    print(f"epoch {epoch + 1}: loss {history['loss'][-1]:.3f}, "
          f"train acc {history['train_acc'][-1]:.3f}, test acc {history['test_acc'][-1]:.3f}")
print(f"{time.perf_counter() - start:.1f} s, output type: {type(net(np.array(x_test[:2]))).__name__}")

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
epochs_axis = range(1, len(history["loss"]) + 1)
ax1.plot(epochs_axis, history["loss"], "o-")
ax1.set_xlabel("epoch")
ax1.set_ylabel("training loss")
ax2.plot(epochs_axis, history["train_acc"], "o-", label="train")
ax2.plot(epochs_axis, history["test_acc"], "s-", label="test")
ax2.set_xlabel("epoch")
ax2.set_ylabel("accuracy")
ax2.legend()
show_figure(fig)

# %% [markdown]
# ## 5. Export and load back
#
# `export` writes the symbol JSON (with MXNet's `_np_*`/`_npi_*` operator names where the
# network used `F.np`) and the parameters; `SymbolBlock.imports` reads them in NumPy mode.

# %%
folder = Path(tempfile.mkdtemp())
net.export(str(folder / "lenet"))
loaded = gluon.SymbolBlock.imports(str(folder / "lenet-symbol.json"), ["data"],
                                   str(folder / "lenet-0000.params"))
sample = np.array(x_test[:16])
onp.testing.assert_allclose(loaded(sample).asnumpy(), net(sample).asnumpy(), rtol=1e-4, atol=1e-5)
print(sorted(p.name for p in folder.iterdir()), type(loaded(sample)).__name__)
npx.reset_np()
