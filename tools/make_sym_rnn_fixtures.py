"""Record real MXNet 1.9.1 results of the symbolic ``mx.rnn`` cells for
``tests/rnn/test_symbolic_rnn_cells.py``.

Run with the reference interpreter::

    .venv-mxnet/bin/python tools/make_sym_rnn_fixtures.py [--out DIR]

It runs itself twice: the fused cases (and their unfused stacks, and the ``FusedRNN``
initializer) with MKLDNN on, as ``make_rnn_fixtures.py`` does (MXNet 1.9.1's own CPU
``RNN`` kernel fails a shape check, "in_data.size() == num_inputs"), everything else with
``MXNET_MKLDNN_ENABLED=0``.

The graphs are the builders of ``tools/sym_rnn_cases.py``. For each case every argument
gets random values (seeded), the graph runs forward (inference) and the file keeps the
argument and output names, the inferred shapes, the arguments and the outputs. Fused
cases also keep MXNet's ``unpack_weights`` of the packed vector (the test feeds them to
the unfused graph too), and ``pack_weights`` of that back; the ``FusedRNN`` initializer
cases keep the vector MXNet fills.

Layout of DIR (default ``tests/fixtures/sym_rnn``), one pair of files per run
(``plain``, ``fused``): ``<run>.json`` (per case: data shapes, argument names, output
names, inferred output shapes) and ``<run>.npz`` (``<case>.arg.<name>``,
``<case>.out<i>``, ``<case>.unpacked.<name>``, ``<case>.repacked``, ``init.<id>``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sym_rnn_cases as cases  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "sym_rnn"
SEED = 20171


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--run", choices=("plain", "fused"))
    opts = parser.parse_args()
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    if opts.run is None:
        for run, mkldnn in (("plain", "0"), ("fused", "1")):
            env = dict(os.environ, MXNET_MKLDNN_ENABLED=mkldnn)
            cmd = [sys.executable, __file__, "--out", str(out), "--run", run]
            subprocess.run(cmd, env=env, check=True)
        return
    record(opts.run, out)


def record(run, out):
    """Run the cases of ``run`` in MXNet and write ``<run>.json`` / ``<run>.npz``."""
    import mxnet as mx

    fused_run = run == "fused"
    rng = np.random.default_rng(SEED)
    meta, arrays = {"cases": {}, "fused_init": {}}, {}
    packed = {}
    for name, build in cases.CASES.items():
        if ("fused_" in name) != fused_run:
            continue
        with mx.name.NameManager():  # automatic names (concat0...) counted per case
            sym, shapes = build(mx)
        arg_shapes, out_shapes, _ = sym.infer_shape(**shapes)
        args = {}
        for arg, shape in zip(sym.list_arguments(), arg_shapes):
            if arg in shapes:
                args[arg] = rng.uniform(-1, 1, shape).astype(np.float32)
            else:
                args[arg] = rng.uniform(-0.5, 0.5, shape).astype(np.float32)
        if name.startswith("unfused_"):  # the fused case's weights, through the unfused stack
            stack = cases._fused(mx, name[2:]).unfuse()
            nd_unpacked = {k: mx.nd.array(v) for k, v in packed[name[2:]].items()}
            args.update({k: v.asnumpy() for k, v in stack.pack_weights(nd_unpacked).items()})
            args["data"] = arrays[f"{name[2:]}.arg.data"]
        exe = sym.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in args.items()})
        outs = [o.asnumpy() for o in exe.forward(is_train=False)]
        meta["cases"][name] = {
            "data": {k: list(v) for k, v in shapes.items()},
            "arguments": sym.list_arguments(),
            "outputs": sym.list_outputs(),
            "out_shapes": [list(s) for s in out_shapes],
        }
        for k, v in args.items():
            arrays[f"{name}.arg.{k}"] = v
        for i, o in enumerate(outs):
            arrays[f"{name}.out{i}"] = o
        if name in cases.FUSED:
            cell = cases._fused(mx, name)
            pname = [a for a in sym.list_arguments() if a.endswith("parameters")][0]
            unpacked = cell.unpack_weights({pname: mx.nd.array(args[pname])})
            unpacked = {k: v.asnumpy() for k, v in unpacked.items()}
            packed[name] = unpacked
            for k, v in unpacked.items():
                arrays[f"{name}.unpacked.{k}"] = v
            repacked = cell.pack_weights({k: mx.nd.array(v) for k, v in unpacked.items()})
            arrays[f"{name}.repacked"] = repacked[pname].asnumpy()
        if name.startswith("unfused_"):  # MXNet agrees with itself: unfused == fused
            np.testing.assert_allclose(outs[0], arrays[f"{name[2:]}.out0"], rtol=1e-4, atol=1e-5)
        print(name, [o.shape for o in outs])
    for name, (kw, _how, ni) in cases.FUSED_INIT.items() if fused_run else ():
        init, global_init = cases.fused_init(mx, name)
        cell = mx.rnn.FusedRNNCell(prefix="", **kw)
        data = mx.sym.Variable("data")
        size = cell.unroll(1, data, layout="TNC")[0].infer_shape(data=(1, 1, ni))[0][1]
        arr = mx.nd.zeros(size)
        if init._init is None:  # the route Module.init_params takes (the variable's __init__)
            global_init(mx.init.InitDesc("parameters", attrs={"__init__": init.dumps()}), arr)
        else:  # MXNet 1.9.1 cannot re-create a FusedRNN with an inner init from its dumps()
            init._init_weight(mx.init.InitDesc("parameters", global_init=global_init), arr)
        arrays[f"init.{name}"] = arr.asnumpy()
        meta["fused_init"][name] = {"size": list(size), "dumps": init.dumps()}
        print("init", name, size)
    (out / f"{run}.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    np.savez_compressed(out / f"{run}.npz", **arrays)


if __name__ == "__main__":
    main()
