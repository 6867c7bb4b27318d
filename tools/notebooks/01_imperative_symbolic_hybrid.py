# ruff: noqa: E402, E501, B018, UP031
# %% [markdown]
# # Imperative, symbolic and hybrid programming
#
# This notebook follows the "hybrid programming" chapter of the MXNet books (d2l's *Compilers and
# Interpreters*) with `import gluonjax as mx` in place of `import mxnet as mx`. Everything is run
# and timed here, in this notebook: nothing is copied from an MXNet run.
#
# ## Imperative programming
#
# Python runs one statement after the other and keeps every intermediate value.

# %%
def add(a, b):
    return a + b


def fancy_func(a, b, c, d):
    e = add(a, b)
    f = add(c, d)
    g = add(e, f)
    return g


print(fancy_func(1, 2, 3, 4))

# %% [markdown]
# ## Symbolic programming
#
# A symbolic program is (1) defined completely, (2) compiled into an executable program, and
# (3) run on inputs. Here the "definition" is a string of Python source, compiled with `compile`
# and run with `exec`: the compiler sees the whole program before anything runs, so it could
# simplify `fancy_func(1, 2, 3, 4)` to `10`.

# %%
def add_str():
    return """
def add(a, b):
    return a + b
"""


def fancy_func_str():
    return """
def fancy_func(a, b, c, d):
    e = add(a, b)
    f = add(c, d)
    g = add(e, f)
    return g
"""


def evoke_str():
    return add_str() + fancy_func_str() + """
print(fancy_func(1, 2, 3, 4))
"""


prog = evoke_str()
print(prog)
y = compile(prog, "", "exec")
exec(y)

# %% [markdown]
# Imperative code is easier to write and debug; symbolic code is easier to optimise and to
# carry to places without a Python interpreter. Gluon combines them: develop imperatively, then
# call `hybridize()`. In gluonjax `hybridize()` traces the block once and compiles it with
# `jax.jit` into one XLA program.
#
# ## HybridSequential

# %%
import json
import os
import time

import numpy as np

import gluonjax as mx
from gluonjax import nd, sym
from gluonjax.gluon import nn

mx.random.seed(0)


def get_net():
    net = nn.HybridSequential()  # a HybridBlock container
    net.add(nn.Dense(256, activation="relu"),
            nn.Dense(128, activation="relu"),
            nn.Dense(2))
    net.initialize()
    return net


x = nd.random.normal(shape=(1, 512))
net = get_net()
eager_out = net(x)
eager_out

# %% [markdown]
# `hybridize()` compiles the whole network; the result does not change.

# %%
net.hybridize()
hybrid_out = net(x)
np.testing.assert_allclose(hybrid_out.asnumpy(), eager_out.asnumpy(), rtol=1e-5, atol=1e-6)
hybrid_out

# %% [markdown]
# ### Speed, measured now
#
# The same benchmark as the book: 1000 calls, then `nd.waitall()` (jax, like MXNet's engine,
# computes asynchronously). The first call after `hybridize()` compiles, so each benchmark is
# preceded by one untimed call.

# %%
def benchmark(net, x, n=1000):
    net(x).wait_to_read()  # compile / warm up, not timed
    start = time.time()
    for _ in range(n):
        _ = net(x)
    nd.waitall()
    return time.time() - start


net = get_net()
before = benchmark(net, x)
net.hybridize()
after = benchmark(net, x)
print("before hybridizing: %.4f sec" % before)
print("after hybridizing:  %.4f sec" % after)

# %% [markdown]
# The two numbers are close: gluonjax already runs a container made only of built-in layers
# (`Dense`, `Conv2D`, ...) as one compiled call in eager mode. The difference shows with a block
# that has its own Python `hybrid_forward`, which runs operator by operator until it is
# hybridized:

# %%
class MLP(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.d1 = nn.Dense(256)
        self.d2 = nn.Dense(128)
        self.d3 = nn.Dense(2)

    def hybrid_forward(self, F, x):
        return self.d3(F.relu(self.d2(F.relu(self.d1(x)))))


mlp = MLP()
mlp.initialize()
before = benchmark(mlp, x)
mlp.hybridize()
after = benchmark(mlp, x)
print("custom block, before hybridizing: %.4f sec" % before)
print("custom block, after hybridizing:  %.4f sec (%.1fx)" % (after, before / after))

# %% [markdown]
# ## Getting the symbolic program: `export`
#
# After the hybridized network has run once (so its input shape is known), `export` writes the
# symbolic program and the parameters. Besides MXNet's two files (`-symbol.json`, `.params`)
# gluonjax writes a StableHLO artifact and its manifest, which run without gluonjax
# (see notebook 03 and `docs/export.md`).

# %%
net(x)
files = net.export("my_mlp")
for f in files:
    print(f"{f:28s} {os.path.getsize(f):8d} bytes")

# %%
with open("my_mlp-symbol.json") as f:
    graph = json.load(f)
print([(node["op"], node["name"]) for node in graph["nodes"]])

# %% [markdown]
# The JSON and the parameters load back into a block (MXNet's `SymbolBlock.imports`) that
# computes the same thing:

# %%
from gluonjax import gluon

net2 = gluon.SymbolBlock.imports("my_mlp-symbol.json", ["data"], "my_mlp-0000.params")
np.testing.assert_allclose(net2(x).asnumpy(), net(x).asnumpy(), rtol=1e-5, atol=1e-6)
print("reloaded model agrees")

# %% [markdown]
# A hybridized network also accepts a `Symbol` and returns the symbolic program:

# %%
x_sym = sym.var("data")
net(x_sym)

# %% [markdown]
# ## Building a `HybridBlock`
#
# `hybrid_forward` gets an extra argument `F`: `mx.nd` when the block runs imperatively,
# `mx.sym` while it is being hybridized.

# %%
class HybridNet(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = nn.Dense(10)
        self.output = nn.Dense(2)

    def hybrid_forward(self, F, x):
        print("F: ", F)
        print("x: ", x)
        x = F.relu(self.hidden(x))
        print("hidden: ", x)
        return self.output(x)


net = HybridNet()
net.initialize()
x = nd.random.normal(shape=(1, 4))
net(x)

# %% [markdown]
# Running it again prints again: imperative code runs every time.

# %%
net(x)

# %% [markdown]
# After `hybridize()` the first call traces `hybrid_forward` with symbols (`F` is
# `gluonjax.symbol`, `x` is `<Symbol data>`):

# %%
net.hybridize()
net(x)

# %% [markdown]
# New data of the same shape runs the compiled program: `hybrid_forward` is not called, so
# nothing is printed.

# %%
x = nd.random.normal(shape=(1, 4))
net(x)

# %% [markdown]
# ## A block with its own parameter
#
# From the Gluon tutorial: a LeNet whose last layer is a parameter created with
# `self.params.get` and used through `F.dot`. It prints its input; after `hybridize()` only the
# first call prints (a `Symbol`).

# %%
class Net(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv1 = nn.Conv2D(6, kernel_size=5)
            self.pool1 = nn.MaxPool2D(pool_size=2)
            self.conv2 = nn.Conv2D(16, kernel_size=5)
            self.pool2 = nn.MaxPool2D(pool_size=2)
            self.fc1 = nn.Dense(120)
            self.fc2 = nn.Dense(84)
            self.fc3_weight = self.params.get("fc3_weight", shape=(10, 84))

    def hybrid_forward(self, F, x, fc3_weight):
        print(type(x).__name__, x.shape)
        x = self.pool1(F.relu(self.conv1(x)))
        x = self.pool2(F.relu(self.conv2(x)))
        x = x.reshape((0, -1))  # 0 copies a dimension, -1 infers one
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return F.dot(x, fc3_weight, transpose_b=True)


lenet = Net()
lenet.initialize()
for _ in range(2):
    lenet(nd.random.normal(shape=(16, 1, 28, 28)))
print("-- hybridized --")
lenet.hybridize()
for _ in range(2):
    out = lenet(nd.random.normal(shape=(16, 1, 28, 28)))
out.shape

# %% [markdown]
# ## What hybridization allows in gluonjax, compared with MXNet
#
# MXNet's symbols forbid several things inside `hybrid_forward`. In gluonjax the traced values are
# jax arrays with static shapes, so these work the same hybridized or not:
#
# | in `hybrid_forward` | MXNet 1.x after `hybridize()` | gluonjax |
# | --- | --- | --- |
# | `x.shape` | `AttributeError: 'Symbol' object has no attribute 'shape'` | the shape (a tuple of ints) |
# | `x[0]`, `x[:, 1:3]` | selects outputs of a grouped symbol | NumPy-style slicing |
# | `a += b`, `a[:] = v` | not supported | supported |
# | `x + F.ones((1, 1))` | no broadcasting (`broadcast_add` needed) | broadcasts |

# %%
class Lifted(nn.HybridBlock):
    def hybrid_forward(self, F, x):
        batch = x.shape[0]  # a Python int, also while hybridizing
        y = x[:, 1:3]  # slicing
        y += 1  # in-place update
        y[0] = 0  # item assignment
        return y.reshape((batch, -1)) + F.ones((1, 1))  # broadcasting +


lifted = Lifted()
data = nd.arange(12).reshape((3, 4))
eager = lifted(data)
lifted.hybridize()
hybrid = lifted(data)
np.testing.assert_array_equal(eager.asnumpy(), hybrid.asnumpy())
hybrid

# %% [markdown]
# ## What still cannot be hybridized
#
# A compiled program cannot look at the *values* it computes while it is being traced:
# `asnumpy()` / `asscalar()` inside `hybrid_forward`, and Python `if` / `while` on an array's
# value. Both work imperatively; hybridized they raise `HybridizationError`, which names the
# block and the alternatives.

# %%
class UsesNumPy(nn.HybridBlock):
    def hybrid_forward(self, F, x):
        return x * float(x.asnumpy().max())


class ValueDependentIf(nn.HybridBlock):
    def hybrid_forward(self, F, x):
        if x.sum() > 0:
            return x
        return -x


for block in (UsesNumPy(), ValueDependentIf()):
    print(type(block).__name__, "imperative:", block(nd.ones((2, 2))).sum().asscalar())
    block.hybridize()
    try:
        block(nd.ones((2, 2)))
    except mx.base.HybridizationError as err:
        print("HybridizationError:", err)

# %% [markdown]
# The value-dependent branch becomes part of the program with `F.where` or `F.contrib.cond`:

# %%
class WithCond(nn.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.contrib.cond(x.sum() > 0, lambda: x, lambda: -x)


with_cond = WithCond()
with_cond.hybridize()
print(with_cond(nd.ones((2, 2))).asnumpy(), with_cond(-nd.ones((2, 2))).asnumpy())

# %% [markdown]
# ## Summary
#
# * Imperative code is easy to write and debug; symbolic code is faster and portable.
# * `HybridSequential` and `HybridBlock` run imperatively until `hybridize()`, which compiles them
#   with `jax.jit`. `hybrid_forward` runs again only for a new input shape or dtype.
# * `export` writes the symbolic program (MXNet JSON + params, and a StableHLO artifact).
# * In gluonjax `x.shape`, slicing, in-place updates and broadcasting work inside
#   `hybrid_forward`; reading values (`asnumpy()`, `if` on a value) does not.
