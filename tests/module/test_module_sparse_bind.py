"""A Module over a graph with a row_sparse weight binds and initializes it (MXNet's
test_contrib_svrg_module::test_module_initializer does the same); values from NumPy."""

import numpy as np

import gluonjax as mx


def test_module_with_row_sparse_weight_binds_and_runs():
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", stype="row_sparse", shape=(5, 2))
    out = mx.sym.dot(x, w, name="dot")
    mod = mx.mod.Module(out, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (3, 5))], for_training=False)
    mod.init_params(mx.init.One())
    arg, _ = mod.get_params()
    assert arg["weight"].stype == "row_sparse"
    np.testing.assert_array_equal(arg["weight"].asnumpy(), np.ones((5, 2)))
    data = np.array([[1.0, 0, 2, 0, 0], [0, 0, 0, 0, 0], [0, 3, 0, 0, 1]], np.float32)
    batch = mx.io.DataBatch([mx.nd.array(data).tostype("csr")])
    mod.forward(batch, is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), data @ np.ones((5, 2)))
