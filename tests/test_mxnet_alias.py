"""``gluonjax.mxnet_alias`` and ``python -m gluonjax.run``: ``import mxnet`` runs on gluonjax.

Every check runs in a subprocess, so the alias never leaks into the other tests' process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _env(extra_path=()):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*map(str, extra_path), str(REPO)])
    env.pop("GLUONJAX_MXNET_ALIAS", None)
    return env


def _run(code, *, extra_path=(), args=(), check=True):
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        env=_env(extra_path),
        cwd=str(REPO),
        timeout=240,
    )
    if check and proc.returncode != 0:
        raise AssertionError(proc.stderr[-3000:])
    return proc


@pytest.fixture
def fake_mxnet(tmp_path):
    """A directory holding a package called ``mxnet``: a stand-in for a real installation."""
    pkg = tmp_path / "site" / "mxnet"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("__version__ = 'real'\n")
    return tmp_path / "site"


def test_alias_modules_are_gluonjax_modules():
    out = _run(
        """
        import json, sys
        import gluonjax.mxnet_alias as alias
        assert "mxnet" not in sys.modules and not alias.is_installed()
        alias.install()
        import gluonjax
        import mxnet as mx
        import mxnet.gluon.nn
        from mxnet.gluon.data.vision import transforms
        from mxnet.gluon.block import HybridBlock
        from mxnet.base import numeric_types
        import mxnet.ndarray.contrib
        import importlib.metadata as md
        try:
            import mxnet.no_such_module
            missing = None
        except ImportError as e:
            missing = str(e)
        net = mx.gluon.nn.Dense(2)
        print(json.dumps({
            "version": mx.__version__,
            "gluonjax_version": gluonjax.__version__,
            "metadata_version": md.version("mxnet"),
            "nn": mxnet.gluon.nn is gluonjax.gluon.nn,
            "transforms": transforms is gluonjax.gluon.data.vision.transforms,
            "contrib": mxnet.ndarray.contrib is gluonjax.ndarray.contrib,
            "sys_modules": sys.modules["mxnet.gluon.nn"] is gluonjax.gluon.nn,
            "hybridblock": HybridBlock is gluonjax.gluon.HybridBlock,
            "isinstance": isinstance(net, gluonjax.gluon.HybridBlock),
            "numeric_types": numeric_types is gluonjax.base.numeric_types,
            "nd": mx.nd is gluonjax.nd,
            "ones": mx.nd.ones((2,)).asnumpy().tolist(),
            "missing": missing,
        }))
        """
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    import gluonjax

    assert got["version"] == "1.9.1"
    assert got["metadata_version"] == "1.9.1"
    assert got["gluonjax_version"] == gluonjax.__version__ != "1.9.1"
    for key in ("nn", "transforms", "contrib", "sys_modules", "hybridblock", "isinstance"):
        assert got[key] is True, key
    assert got["numeric_types"] is True and got["nd"] is True
    assert got["ones"] == [1.0, 1.0]
    assert "mxnet.no_such_module" in got["missing"]


def test_alias_is_off_by_default():
    proc = _run("import gluonjax\nimport mxnet", check=False)
    assert proc.returncode != 0 and "No module named 'mxnet'" in proc.stderr


def test_uninstall_turns_it_off():
    out = _run(
        """
        import gluonjax.mxnet_alias as alias, sys
        alias.install(); import mxnet.gluon
        alias.uninstall()
        print(any(k == "mxnet" or k.startswith("mxnet.") for k in sys.modules))
        try:
            import mxnet
            print("imported")
        except ImportError:
            print("gone")
        """
    )
    assert out.stdout.split() == ["False", "gone"]


def test_real_mxnet_is_not_shadowed(fake_mxnet):
    proc = _run(
        """
        import gluonjax.mxnet_alias as alias
        from gluonjax.base import MXNetError
        try:
            alias.install()
        except MXNetError as e:
            print("refused:", e)
        import mxnet
        print("version", mxnet.__version__)
        """,
        extra_path=[fake_mxnet],
    )
    assert "refused:" in proc.stdout and "real MXNet" in proc.stdout
    assert "force=True" in proc.stdout
    assert "version real" in proc.stdout


def test_force_shadows_real_mxnet(fake_mxnet):
    proc = _run(
        """
        import mxnet
        assert mxnet.__version__ == "real"
        import gluonjax.mxnet_alias as alias, gluonjax
        alias.install(force=True)
        import mxnet as mx
        print(mx.__version__, mx.gluon is gluonjax.gluon)
        """,
        extra_path=[fake_mxnet],
    )
    assert proc.stdout.split()[-2:] == ["1.9.1", "True"]


def test_run_command(tmp_path):
    script = tmp_path / "train.py"
    (tmp_path / "helper_mod.py").write_text("VALUE = 7\n")
    script.write_text(
        textwrap.dedent(
            """
            import sys
            import mxnet as mx
            import helper_mod
            x = mx.nd.ones((2,))
            print(__name__, mx.__version__, float(x.sum().asscalar()), helper_mod.VALUE,
                  *sys.argv[1:])
            """
        )
    )
    proc = subprocess.run(
        [sys.executable, "-m", "gluonjax.run", str(script), "--lr", "0.1"],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=str(tmp_path),
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["__main__", "1.9.1", "2.0", "7", "--lr", "0.1"]


def test_run_command_refuses_real_mxnet(tmp_path, fake_mxnet):
    script = tmp_path / "s.py"
    script.write_text("print('ran')\n")
    proc = subprocess.run(
        [sys.executable, "-m", "gluonjax.run", str(script)],
        capture_output=True,
        text=True,
        env=_env([fake_mxnet]),
        timeout=240,
    )
    assert proc.returncode != 0 and "real MXNet" in proc.stderr and "--force" in proc.stderr
    assert "ran" not in proc.stdout


@pytest.mark.parametrize("value,expect", [("1", "1.9.1"), ("0", "off")])
def test_pth_line_honours_the_environment_variable(value, expect):
    # the line `python -m gluonjax.mxnet_alias pth-install` writes, run as site.py runs it
    from gluonjax.mxnet_alias import _pth_line

    env = _env()
    if value is not None:
        env["GLUONJAX_MXNET_ALIAS"] = value
    code = (
        f"exec({_pth_line()!r})\n"
        "try:\n    import mxnet; print(mxnet.__version__)\n"
        "except ImportError:\n    print('off')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=240
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[-1] == expect
