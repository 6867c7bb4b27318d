"""gluonjax export -> gluon.SymbolBlock.imports: same outputs, eager and hybridized."""

from __future__ import annotations

import export_nets as nets
import numpy as np
import pytest

import gluonjax as mx

CASES = dict(nets.NETS, jnp=(nets.jnp_block, nets.jnp_block_ref, (3, 4)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_symbolblock_imports_exported_files(tmp_path, name):
    make, ref, shape = CASES[name]
    net = make()
    net.hybridize()
    x = np.random.RandomState(5).normal(size=shape).astype(np.float32)
    net(mx.nd.array(x))
    prefix = str(tmp_path / name)
    net.export(prefix, example_inputs=[mx.nd.array(x)], stablehlo=False)
    blk = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    expected = ref(net, x)
    np.testing.assert_allclose(blk(mx.nd.array(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)
    blk.hybridize()
    np.testing.assert_allclose(blk(mx.nd.array(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)
    # exporting the imported block again gives the same graph and outputs
    files = blk.export(str(tmp_path / "again"), example_inputs=[mx.nd.array(x)], stablehlo=False)
    blk2 = mx.gluon.SymbolBlock.imports(files[0], ["data"], files[1])
    np.testing.assert_allclose(blk2(mx.nd.array(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)
