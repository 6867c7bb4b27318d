# ruff: noqa: E402, E501, B015, B018, B905, UP031
# %% [markdown]
# # The Symbol API
#
# MXNet's symbolic interface, run with `import gluonjax as mx`. A `Symbol` declares a
# computation graph first; it is then bound to data and run. `mx.sym` and `mx.nd` share one
# operator registry, so every operator below also exists in `mx.nd` with the same arguments.
#
# Graphs are drawn with `mx.viz.plot_network`, which returns a `graphviz.Digraph`. Drawing it
# needs Graphviz's `dot` program; without it this notebook prints the graph's DOT source instead.

# %%
import shutil

import gluonjax as mx
from gluonjax import nd


def show(graph):
    """Draw the graph inline if Graphviz's `dot` is installed, else print its DOT source."""
    if shutil.which("dot"):
        return graph
    print(graph.source)


print("Graphviz dot:", shutil.which("dot") or "not installed (DOT source shown instead)")

# %% [markdown]
# ## Basic operators
#
# Symbols support the NDArray arithmetic, plus every operator of the registry.

# %%
a = mx.sym.Variable("a")
b = mx.sym.Variable("b")
c = a + b
(a, b, c)

# %%
d = a * b  # elementwise multiplication
e = mx.sym.dot(a, b)  # matrix multiplication
f = mx.sym.reshape(d + e, shape=(1, 4))
g = mx.sym.broadcast_to(f, shape=(2, 4))
show(mx.viz.plot_network(symbol=g, node_attrs={"shape": "oval", "fixedsize": "false"}))

# %% [markdown]
# `c = a + b` is not part of `g`'s graph: only what `g` depends on is computed.
#
# ## Basic neural networks

# %%
net = mx.sym.Variable("data")
net = mx.sym.FullyConnected(data=net, name="fc1", num_hidden=128)
net = mx.sym.Activation(data=net, name="relu1", act_type="relu")
net = mx.sym.FullyConnected(data=net, name="fc2", num_hidden=10)
net = mx.sym.SoftmaxOutput(data=net, name="out")
show(mx.viz.plot_network(net, shape={"data": (100, 200)},
                         node_attrs={"shape": "oval", "fixedsize": "false"}))

# %% [markdown]
# Every layer names its inputs after itself:

# %%
net.list_arguments()

# %% [markdown]
# An argument can also be given explicitly:

# %%
net = mx.symbol.Variable("data")
w = mx.symbol.Variable("myweight")
net = mx.symbol.FullyConnected(data=net, weight=w, name="fc1", num_hidden=128)
net.list_arguments()

# %% [markdown]
# ## More complicated composition
#
# Operators take symbols built from other operators:

# %%
lhs = mx.symbol.Variable("data1")
rhs = mx.symbol.Variable("data2")
net = mx.symbol.FullyConnected(data=lhs + rhs, name="fc1", num_hidden=128)
net.list_arguments()

# %% [markdown]
# A symbol can also be *called* like a function, replacing its free variables by other symbols:

# %%
data = mx.symbol.Variable("data")
net1 = mx.symbol.FullyConnected(data=data, name="fc1", num_hidden=10)
print(net1.list_arguments())
net2 = mx.symbol.Variable("data2")
net2 = mx.symbol.FullyConnected(data=net2, name="fc2", num_hidden=10)
composed = net2(data2=net1, name="composed")
print(composed.list_arguments())
show(mx.viz.plot_network(composed, shape={"data": (1, 20)}))

# %% [markdown]
# `mx.name.Prefix` prefixes every automatic name, which keeps large networks readable:

# %%
data = mx.sym.Variable("data")
net = data
n_layer = 2
for i in range(n_layer):
    with mx.name.Prefix("layer%d_" % (i + 1)):
        net = mx.sym.FullyConnected(data=net, name="fc", num_hidden=100)
net.list_arguments()

# %% [markdown]
# ## Modular construction of deep networks
#
# Inception is built from a convolution factory (convolution, batch normalisation, activation):

# %%
def ConvFactory(data, num_filter, kernel, stride=(1, 1), pad=(0, 0), name=None, suffix=""):
    conv = mx.sym.Convolution(data=data, num_filter=num_filter, kernel=kernel, stride=stride,
                              pad=pad, name="conv_%s%s" % (name, suffix))
    bn = mx.sym.BatchNorm(data=conv, name="bn_%s%s" % (name, suffix))
    act = mx.sym.Activation(data=bn, act_type="relu", name="relu_%s%s" % (name, suffix))
    return act


prev = mx.sym.Variable(name="Previous Output")
conv_comp = ConvFactory(data=prev, num_filter=64, kernel=(7, 7), stride=(2, 2))
shape = {"Previous Output": (128, 3, 28, 28)}
show(mx.viz.plot_network(symbol=conv_comp, shape=shape,
                         node_attrs={"shape": "oval", "fixedsize": "false"}))

# %% [markdown]
# and an Inception module combines four branches with `Concat`:

# %%
def InceptionFactoryA(data, num_1x1, num_3x3red, num_3x3, num_d3x3red, num_d3x3, pool, proj,
                      name):
    # 1x1
    c1x1 = ConvFactory(data=data, num_filter=num_1x1, kernel=(1, 1), name=("%s_1x1" % name))
    # 3x3 reduce + 3x3
    c3x3r = ConvFactory(data=data, num_filter=num_3x3red, kernel=(1, 1), name=("%s_3x3" % name),
                        suffix="_reduce")
    c3x3 = ConvFactory(data=c3x3r, num_filter=num_3x3, kernel=(3, 3), pad=(1, 1),
                       name=("%s_3x3" % name))
    # double 3x3 reduce + double 3x3
    cd3x3r = ConvFactory(data=data, num_filter=num_d3x3red, kernel=(1, 1),
                         name=("%s_double_3x3" % name), suffix="_reduce")
    cd3x3 = ConvFactory(data=cd3x3r, num_filter=num_d3x3, kernel=(3, 3), pad=(1, 1),
                        name=("%s_double_3x3_0" % name))
    cd3x3 = ConvFactory(data=cd3x3, num_filter=num_d3x3, kernel=(3, 3), pad=(1, 1),
                        name=("%s_double_3x3_1" % name))
    # pool + proj
    pooling = mx.sym.Pooling(data=data, kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type=pool,
                             name=("%s_pool_%s_pool" % (pool, name)))
    cproj = ConvFactory(data=pooling, num_filter=proj, kernel=(1, 1), name=("%s_proj" % name))
    # concat
    concat = mx.sym.Concat(*[c1x1, c3x3, cd3x3, cproj], name="ch_concat_%s_chconcat" % name)
    return concat


prev = mx.sym.Variable(name="Previous Output")
in3a = InceptionFactoryA(prev, 64, 64, 64, 64, 96, "avg", 32, name="in3a")
show(mx.viz.plot_network(symbol=in3a, shape=shape,
                         node_attrs={"shape": "oval", "fixedsize": "false"}))

# %%
print(in3a.infer_shape(**shape)[1])  # 64 + 64 + 96 + 32 channels
mx.viz.print_summary(in3a, shape=shape)

# %% [markdown]
# ## Grouping several outputs
#
# `mx.sym.Group` makes one symbol with several outputs, e.g. a network with two losses:

# %%
net = mx.sym.Variable("data")
fc1 = mx.sym.FullyConnected(data=net, name="fc1", num_hidden=128)
net = mx.sym.Activation(data=fc1, name="relu1", act_type="relu")
out1 = mx.sym.SoftmaxOutput(data=net, name="softmax")
out2 = mx.sym.LinearRegressionOutput(data=net, name="regression")
group = mx.sym.Group([out1, out2])
group.list_outputs()

# %% [markdown]
# ## Shape and type inference
#
# Given the shapes (or types) of some arguments, a symbol infers all the others:

# %%
arg_name = c.list_arguments()  # the inputs
out_name = c.list_outputs()  # the outputs
arg_shape, out_shape, _ = c.infer_shape(a=(2, 3), b=(2, 3))
arg_type, out_type, _ = c.infer_type(a="float32", b="float32")
print({"input": dict(zip(arg_name, arg_shape)), "output": dict(zip(out_name, out_shape))})
print({"input": dict(zip(arg_name, arg_type)), "output": dict(zip(out_name, out_type))})

# %% [markdown]
# ## Binding data and evaluating
#
# `bind` attaches arrays to the arguments and returns an executor; `forward` runs it.

# %%
ex = c.bind(ctx=mx.cpu(), args={"a": mx.nd.ones([2, 3]), "b": mx.nd.ones([2, 3])})
ex.forward()
print("number of outputs = %d\nthe first output = \n%s" % (len(ex.outputs), ex.outputs[0].asnumpy()))

# %% [markdown]
# The same symbol runs on another device with other data. `mx.gpu()` needs a GPU, so this cell
# uses one only when jax sees one:

# %%
device = mx.gpu() if mx.num_gpus() > 0 else mx.cpu()
ex_dev = c.bind(ctx=device, args={"a": mx.nd.ones([3, 4], device) * 2,
                                  "b": mx.nd.ones([3, 4], device) * 3})
ex_dev.forward()
print(device, ex_dev.outputs[0].asnumpy())

# %% [markdown]
# `eval` is `bind` and `forward` in one call:

# %%
ex = c.eval(ctx=mx.cpu(), a=mx.nd.ones([2, 3]), b=mx.nd.ones([2, 3]))
print("number of outputs = %d\nthe first output = \n%s" % (len(ex), ex[0].asnumpy()))

# %% [markdown]
# For training, `simple_bind` allocates the arguments and their gradients from shapes;
# `backward` fills the gradients. Here `y = 2a + ab`, so `dy/da = 2 + b` and `dy/db = a`:

# %%
y = 2 * a + a * b
ex = y.simple_bind(ctx=mx.cpu(), a=(2, 3), b=(2, 3))
ex.arg_dict["a"][:] = 3
ex.arg_dict["b"][:] = 4
ex.forward(is_train=True)
ex.backward(nd.ones((2, 3)))
print(ex.outputs[0].asnumpy()[0], ex.grad_dict["a"].asnumpy()[0], ex.grad_dict["b"].asnumpy()[0])
assert (ex.grad_dict["a"].asnumpy() == 6).all() and (ex.grad_dict["b"].asnumpy() == 3).all()

# %% [markdown]
# ## Saving and loading
#
# A symbol is saved as MXNet's JSON graph (readable, and loadable by MXNet 1.x):

# %%
print(c.tojson())
c.save("symbol-c.json")
c2 = mx.sym.load("symbol-c.json")
c.tojson() == c2.tojson()

# %% [markdown]
# ## Type cast
#
# `mx.sym.cast` changes the data type, e.g. to float16 or uint8:

# %%
a = mx.sym.Variable("data")
b = mx.sym.cast(data=a, dtype="float16")
arg, out, _ = b.infer_type(data="float32")
print({"input": arg, "output": out})
c = mx.sym.cast(data=a, dtype="uint8")
arg, out, _ = c.infer_type(data="int32")
print({"input": arg, "output": out})

# %% [markdown]
# ## Variable sharing
#
# Symbols share values by being bound to the same arrays. `b` below no longer refers to the
# variable `b`; the graph `a + a * a` has the single argument `a`:

# %%
a = mx.sym.Variable("a")
b = mx.sym.Variable("b")
b = a + a * a
data = mx.nd.ones((2, 3)) * 2
ex = b.bind(ctx=mx.cpu(), args={"a": data, "b": data})
ex.forward()
ex.outputs[0].asnumpy()
