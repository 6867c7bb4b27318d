"""Multi-process training: ``mx.kv.create('dist_sync')`` and ``python -m gluonjax.launch``.

The launcher starts 2 local workers on 127.0.0.1 (tests/dist_worker.py), each with
its half of a fixed batch; the expected parameters are computed here with NumPy
(one process, the whole batch). Every launch is bounded by a timeout.
"""

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import launch
from gluonjax._distributed import DistributedInitError, job_from_env
from gluonjax.kvstore import AsyncKVStoreError, DistKVStore, Horovod, KVStore

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import dist_worker  # noqa: E402

LAUNCH_TIMEOUT = 120


def _launch(mode, outdir, timeout=LAUNCH_TIMEOUT, **env_vars):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **env_vars)
    for name in ("GLUONJAX_COORDINATOR", "GLUONJAX_PROCESS_ID", "GLUONJAX_NUM_PROCESSES"):
        env.pop(name, None)
    cmd = [sys.executable, "-m", "gluonjax.launch", "-n", "2", "--timeout", str(timeout)]
    cmd += ["--heartbeat-timeout", "5", sys.executable, str(HERE / "dist_worker.py")]
    cmd += [mode, str(outdir)]
    start = time.monotonic()
    proc = subprocess.run(
        cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout + 30
    )
    return proc, time.monotonic() - start


def _numpy_training(kvstore_steps=dist_worker.STEPS):
    """The whole batch in one process: 2-layer tanh MLP, L2Loss, SGD on sum/batch."""
    x, y, (w1, b1, w2, b2) = dist_worker.data()
    x, y = x.astype(np.float64), y.astype(np.float64)
    w1, b1, w2, b2 = (a.astype(np.float64) for a in (w1, b1, w2, b2))
    n = len(x)
    for _ in range(kvstore_steps):
        h = np.tanh(x @ w1.T + b1)
        out = h @ w2.T + b2
        d_out = (out - y) / out.shape[1]  # L2Loss: 0.5 * mean over the outputs
        g_w2, g_b2 = d_out.T @ h, d_out.sum(0)
        d_h = (d_out @ w2) * (1 - h**2)
        g_w1, g_b1 = d_h.T @ x, d_h.sum(0)
        w1, b1, w2, b2 = (
            w - dist_worker.LR * g / n for w, g in ((w1, g_w1), (b1, g_b1), (w2, g_w2), (b2, g_b2))
        )
    return [w1, b1, w2, b2]


def test_dist_sync_two_workers_match_one_process(tmp_path):
    proc, _ = _launch("train", tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "[0] " in proc.stdout and "[1] " in proc.stdout  # output prefixed with the rank
    results = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    expected = _numpy_training()
    for r, res in enumerate(results):
        store = res["store"]
        assert (store["rank"], store["num_workers"], store["type"]) == (r, 2, "dist_sync")
        np.testing.assert_array_equal(store["init"], np.full((2, 3), 5.0))  # worker 0's value
        np.testing.assert_array_equal(store["push"], np.full((2, 3), 5.0))  # (1+1) + (2+1)
        np.testing.assert_array_equal(store["pushpull"], [3.0, 20.0])
        np.testing.assert_array_equal(store["broadcast"], [2.0, 1.0])  # worker 0's value
        for name in ("dist_sync", "horovod", "split", "module", "compile"):
            for got, want in zip(res[name], expected):
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    assert results[0]["dist_sync"] == results[1]["dist_sync"]  # identical on every worker


def _bn_reference(steps=2):
    """Pure JAX, one process, the whole batch: BatchNorm(axis=1) in training mode (batch
    mean, biased variance; moving statistics with momentum 0.9 as a C float), Dense,
    L2Loss, SGD on the sum of the losses / the batch size. Per step: the BatchNorm
    output, the Dense output, the losses, the parameter and input gradients."""
    import jax
    import jax.numpy as jnp

    x, y, params = dist_worker.syncbn_data()
    x, y = jnp.asarray(x), jnp.asarray(y)
    params = [jnp.asarray(p) for p in params]
    moving = [jnp.zeros(3), jnp.ones(3)]
    momentum = float(np.float32(0.9))

    def forward(ps, xv):
        gamma, beta, w, b = ps
        mean = xv.mean(axis=(0, 2))
        var = jnp.square(xv - mean[None, :, None]).mean(axis=(0, 2))
        h = (xv - mean[None, :, None]) / jnp.sqrt(var + 1e-5)[None, :, None]
        h = h * gamma[None, :, None] + beta[None, :, None]
        o = h.reshape(len(xv), -1) @ w.T + b
        losses = 0.5 * jnp.square(o - y).mean(axis=1)
        return losses.sum(), (h, o, losses, mean, var)

    grad = jax.grad(forward, argnums=(0, 1), has_aux=True)
    steps_out = []
    for _ in range(steps):
        (g_params, g_x), (h, o, losses, mean, var) = grad(params, x)
        steps_out.append({"bn": h, "out": o, "loss": losses, "grads": g_params, "xgrad": g_x})
        moving = [m * momentum + s * (1 - momentum) for m, s in zip(moving, (mean, var))]
        params = [p - dist_worker.LR * g / len(x) for p, g in zip(params, g_params)]
    return steps_out, params, moving


def test_syncbatchnorm_across_two_workers_matches_batchnorm(tmp_path):
    """SyncBatchNorm in a 2-worker job (5 and 3 rows of an 8-row batch): its output,
    the gradients (input: this worker's rows; parameters: summed over the workers),
    the moving statistics and the parameters after 2 SGD steps equal BatchNorm on the
    whole batch in one process; eager, hybridized and compile_step."""
    proc, _ = _launch("syncbn", tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    res = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    want_steps, want_params, want_moving = _bn_reference()
    rows = [slice(0, 5), slice(5, 8)]

    def close(got, want, what):
        np.testing.assert_allclose(
            np.asarray(got), np.asarray(want), rtol=1e-5, atol=2e-6, err_msg=what
        )

    for mode in ("eager", "hybrid", "compile"):
        for r in range(2):
            got = res[r][mode]
            for k, (g, w) in enumerate(zip(got["steps"], want_steps)):
                if mode == "compile":
                    close(g["loss"], w["loss"][rows[r]], f"{mode} loss, step {k}, worker {r}")
                    continue
                if mode == "eager":
                    close(g["bn"], w["bn"][rows[r]], f"{mode} output, step {k}, worker {r}")
                close(g["out"], w["out"][rows[r]], f"{mode} Dense output, step {k}, worker {r}")
                close(g["xgrad"], w["xgrad"][rows[r]], f"{mode} input grad, step {k}, worker {r}")
                if r == 0:  # this worker's parameter gradients + the other's
                    other = res[1][mode]["steps"][k]["grads"]
                    for j, (a, b, want) in enumerate(zip(g["grads"], other, w["grads"])):
                        close(np.add(a, b), want, f"{mode} gradient {j}, step {k}")
            for j, (g, w) in enumerate(zip(got["params"], want_params)):
                close(g, w, f"{mode} parameter {j} after the steps, worker {r}")
            for j, (g, w) in enumerate(zip(got["moving"], want_moving)):
                close(g, w, f"{mode} moving statistic {j}, worker {r}")
        gamma, beta = (np.asarray(v)[None, :, None] for v in want_params[:2])
        mean, var = (np.asarray(v)[None, :, None] for v in want_moving)
        x = dist_worker.syncbn_data()[0]
        want = (x - mean) / np.sqrt(var + 1e-5) * gamma + beta
        close(res[0][mode]["predict"], want, f"{mode} inference on worker 0 alone")


def test_collective_order_check():
    """traced_allsum's tag check: equal tags pass, any difference is caught."""
    from gluonjax._collectives import CollectiveMismatchError, _check_tags, _tag_rows

    def total(tags):
        return np.sum([_tag_rows(t) for t in tags], axis=0, dtype=np.int32)

    for tag in (7, 0xFFFFFFFF, 123456789):
        _check_tags("bn/sum", tag, total([tag] * 3), 3)
    for tags in ([1, 2], [5, 5, 6], [0xFFFFFFFF, 1]):
        with pytest.raises(CollectiveMismatchError, match="same layers in the same order"):
            _check_tags("bn/sum", tags[0], total(tags), len(tags))


def test_two_workers_with_two_devices_each(tmp_path):
    """4 devices in 2 processes: split_and_load over this worker's devices, gradients
    summed over them and over the workers; worker 1's copies on both devices start
    from worker 0's values."""
    flags = "--xla_force_host_platform_device_count=2"
    proc, _ = _launch("devices", tmp_path, XLA_FLAGS=flags)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    expected = _numpy_training()
    for r in range(2):
        res = json.loads((tmp_path / f"rank{r}.json").read_text())
        for name in ("dist_sync", "horovod"):
            for got, want in zip(res[name], expected):
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
        assert "several devices per worker is not supported" in res["compile_error"]


@pytest.mark.parametrize("mode, code", [("kill", 128 + 9), ("raise", 1)])
def test_failed_worker_stops_the_job(tmp_path, mode, code):
    """Worker 1 dies after one step (SIGKILL, or an exception); worker 0 waits for it
    in its next collective. The launcher stops worker 0 and exits with worker 1's code."""
    proc, took = _launch(mode, tmp_path, timeout=60)
    assert proc.returncode == code, proc.stdout[-4000:]
    assert "[1] worker 1 fails on purpose" in proc.stdout
    if mode == "kill":  # a death by signal is blamed first
        assert f"[launch] worker 1 exited with code {code}; stopping the other" in proc.stdout
    else:
        # worker 0 fails within milliseconds of worker 1 (its collective loses the peer),
        # also with code 1: on a loaded machine their exits cannot be ordered reliably
        assert re.search(rf"\[launch\] worker [01] exited with code {code}; stopping", proc.stdout)
    assert took < 60


def test_launcher_timeout_and_failure_codes(tmp_path):
    quick = [sys.executable, "-c"]
    entries = [
        (0, quick + ["import time; time.sleep(30)"], {}),
        (1, quick + ["import time; time.sleep(30)"], {}),
    ]
    out = tmp_path / "log"
    with open(out, "w") as sink:
        start = time.monotonic()
        assert launch.supervise(entries, timeout=0.5, sink=sink) == 124
        assert time.monotonic() - start < 10
        entries = [
            (0, quick + ["import time; time.sleep(30)"], {}),
            (1, quick + ["import os; print(os.environ['R']); raise SystemExit(7)"], {"R": "x"}),
        ]
        assert launch.supervise(entries, timeout=20, sink=sink) == 7
        assert launch.supervise([(0, quick + ["pass"], {})], timeout=20, sink=sink) == 0
    log = out.read_text()
    assert "--timeout 0.5 s" in log and "[1] x\n" in log
    assert "worker 1 exited with code 7" in log


def _commands(argv, capsys):
    assert launch.main(["--dry-run"] + argv) == 0
    return capsys.readouterr().out.strip().splitlines()


def test_local_dry_run_environment(capsys):
    lines = _commands(["-n", "2", "--port", "9123", "python", "train.py", "--lr", "0.1"], capsys)
    assert len(lines) == 2
    for r, line in enumerate(lines):
        assert line.endswith("python train.py --lr 0.1")
        for item in (
            "GLUONJAX_COORDINATOR=127.0.0.1:9123",
            "GLUONJAX_NUM_PROCESSES=2",
            f"GLUONJAX_PROCESS_ID={r}",
            "DMLC_ROLE=worker",
            "DMLC_NUM_WORKER=2",
            f"DMLC_WORKER_ID={r}",
            "DMLC_PS_ROOT_URI=127.0.0.1",
            "DMLC_PS_ROOT_PORT=9123",
        ):
            assert item in line.split(), (item, line)


def test_ssh_and_mpi_commands(tmp_path, capsys, monkeypatch):
    hosts = tmp_path / "hosts"
    hosts.write_text("# cluster\nnode1\nnode2:2222\n\n")
    monkeypatch.setenv("MY_SETTING", "a b")
    lines = _commands(
        ["-n", "3", "-H", str(hosts), "--port", "9000", "--sync-dst-dir", "/job dir"]
        + ["--env", "MY_SETTING", "--env-worker", "OMP_NUM_THREADS:2"]
        + ["python", "train.py", "--x", "1"],
        capsys,
    )
    assert len(lines) == 3
    assert lines[0].startswith("ssh -o StrictHostKeyChecking=no node1 ")
    assert lines[1].startswith("ssh -o StrictHostKeyChecking=no -p 2222 node2 ")
    assert lines[2].startswith("ssh -o StrictHostKeyChecking=no node1 ")  # hosts in turn
    for r, line in enumerate(lines):
        remote = shlex.split(line)[-1]
        assert remote.startswith("cd '/job dir' && env ")
        for item in (
            "GLUONJAX_COORDINATOR=node1:9000",
            f"GLUONJAX_PROCESS_ID={r}",
            "DMLC_NUM_WORKER=3",
            "OMP_NUM_THREADS=2",
            "MY_SETTING='a b'",
        ):
            assert item in remote, (item, remote)
        assert remote.endswith(" python train.py --x 1")
    (mpi,) = _commands(["-n", "4", "-H", str(hosts), "--launcher", "mpi", "python", "t.py"], capsys)
    assert mpi.startswith(f"mpirun -n 4 --hostfile {hosts} --tag-output -wdir ")
    assert "-x GLUONJAX_COORDINATOR=node1:9091" in mpi and "-x DMLC_NUM_WORKER=4" in mpi
    assert "GLUONJAX_PROCESS_ID" not in mpi  # ranks come from OMPI_COMM_WORLD_RANK
    assert mpi.endswith(" python t.py")


def _env_of(line):
    return dict(item.split("=", 1) for item in shlex.split(line) if "=" in item)


def test_gpus_per_worker_commands(tmp_path, capsys):
    """--gpus-per-worker K: worker i of a machine gets jax's JAX_LOCAL_DEVICE_IDS
    i*K..i*K+K-1 (local, ssh); mpi passes K and each worker reads its local rank from
    MPI. Without the flag no worker is restricted (today's default)."""
    lines = _commands(["-n", "3", "--gpus-per-worker", "2", "python", "t.py"], capsys)
    envs = [_env_of(line) for line in lines]
    assert [e["JAX_LOCAL_DEVICE_IDS"] for e in envs] == ["0,1", "2,3", "4,5"]
    assert [e["GLUONJAX_LOCAL_RANK"] for e in envs] == ["0", "1", "2"]
    assert all(e["GLUONJAX_GPUS_PER_WORKER"] == "2" for e in envs)
    for line in _commands(["-n", "2", "python", "t.py"], capsys):
        assert "JAX_LOCAL_DEVICE_IDS" not in line and "GPUS_PER_WORKER" not in line
    hosts = tmp_path / "hosts"
    hosts.write_text("node1\nnode2\n")
    argv = ["-n", "4", "-H", str(hosts), "--gpus-per-worker", "1", "python", "t.py"]
    lines = _commands(argv, capsys)
    remote = [_env_of(shlex.split(line)[-1]) for line in lines]
    assert [line.split()[3] for line in lines] == ["node1", "node2", "node1", "node2"]
    assert [e["JAX_LOCAL_DEVICE_IDS"] for e in remote] == ["0", "0", "1", "1"]
    (mpi,) = _commands(argv[:4] + ["--launcher", "mpi"] + argv[4:], capsys)
    assert "-x GLUONJAX_GPUS_PER_WORKER=1" in mpi and "JAX_LOCAL_DEVICE_IDS" not in mpi


def test_local_device_ids_from_env(monkeypatch):
    from gluonjax import _distributed

    get = _distributed.local_device_ids_from_env
    assert get({"JAX_LOCAL_DEVICE_IDS": "4,5", "GLUONJAX_GPUS_PER_WORKER": "1"}) == [4, 5]
    assert get({"GLUONJAX_GPUS_PER_WORKER": "2", "GLUONJAX_LOCAL_RANK": "2"}) == [4, 5]
    assert get({"GLUONJAX_GPUS_PER_WORKER": "1", "SLURM_LOCALID": "3"}) == [3]
    assert get({"DMLC_NUM_WORKER": "2"}) is None
    with pytest.raises(DistributedInitError, match="rank on its machine"):
        get({"GLUONJAX_GPUS_PER_WORKER": "2"})
    with pytest.raises(DistributedInitError, match="comma-separated"):
        get({"JAX_LOCAL_DEVICE_IDS": "0;1"})
    # the ids reach jax.distributed.initialize (which restricts the CUDA/ROCm devices)
    seen = {}
    monkeypatch.setattr(_distributed, "is_initialized", lambda: False)
    monkeypatch.setattr(_distributed, "_fail_fast", lambda: None)
    monkeypatch.setattr("jax.distributed.initialize", lambda **kw: seen.update(kw))
    monkeypatch.setattr("jax.config.update", lambda name, value: seen.update({name: value}))
    env = dict(launch.worker_env(4, "127.0.0.1", 9000, 3, 5, gpus_per_worker=2, local_rank=1))
    assert _distributed.init_from_env(env) is True
    assert seen["local_device_ids"] == [2, 3] and seen["process_id"] == 3
    assert seen["num_processes"] == 4 and seen["coordinator_address"] == "127.0.0.1:9000"


def test_launcher_argument_errors(tmp_path, capsys):
    assert launch.main(["-n", "2", "--launcher", "ssh", "--dry-run", "python", "t.py"]) == 2
    assert "needs a hostfile" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.write_text("# nobody\n")
    assert launch.main(["-n", "2", "-H", str(empty), "--dry-run", "python", "t.py"]) == 2
    assert "lists no hosts" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        launch.main(["-n", "2"])
    with pytest.raises(SystemExit):
        launch.main(["-n", "2", "--gpus-per-worker", "-1", "--dry-run", "python", "t.py"])
    assert "--gpus-per-worker must be at least 1" in capsys.readouterr().err


def test_job_from_env():
    env = {"GLUONJAX_COORDINATOR": "h:1", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_RANK": "3"}
    assert job_from_env(env) == ("h:1", 4, 3)
    assert job_from_env({"DMLC_NUM_WORKER": "2", "DMLC_WORKER_ID": "1"}) is None
    with pytest.raises(DistributedInitError, match="is missing"):
        job_from_env({"GLUONJAX_COORDINATOR": "h:1", "DMLC_NUM_WORKER": "2"})
    with pytest.raises(DistributedInitError, match="outside"):
        job_from_env({"GLUONJAX_COORDINATOR": "h:1", "DMLC_NUM_WORKER": "2", "DMLC_WORKER_ID": "2"})


@pytest.mark.parametrize(
    "name, cls, workers",
    [
        ("local", KVStore, 1),
        ("device", KVStore, 1),
        ("nccl", KVStore, 1),
        ("dist_sync", DistKVStore, 1),
        ("dist_device_sync", DistKVStore, 1),
        ("dist_sync_device", DistKVStore, 1),
        ("horovod", Horovod, 1),
    ],
)
def test_create_every_name(name, cls, workers):
    kv = mx.kv.create(name)
    assert type(kv) is cls and kv.type == name
    assert (kv.rank, kv.num_workers) == (0, workers)
    kv.barrier()
    kv.init(0, mx.nd.ones((2,)))
    out = mx.nd.zeros((2,))
    kv.pushpull(0, [mx.nd.ones((2,)) * 2, mx.nd.ones((2,)) * 3], out=out)
    np.testing.assert_array_equal(out.asnumpy(), [5.0, 5.0])
    assert kv.is_capable("optimizer") is (name != "horovod")


@pytest.mark.parametrize("name", ["dist_async", "DIST_ASYNC"])
def test_dist_async_refuses(name):
    with pytest.raises(AsyncKVStoreError, match="dist_sync") as err:
        mx.kv.create(name)
    assert isinstance(err.value, mx.base.MXNetError) and isinstance(err.value, ValueError)


def test_horovod_has_no_optimizer():
    with pytest.raises(mx.base.MXNetError, match="does not run an optimizer"):
        mx.kv.create("horovod").set_optimizer(mx.optimizer.SGD())


def test_one_worker_dist_sync_trainer_matches_numpy():
    """dist_sync outside a launched job: the single worker of MXNet's one-worker job."""
    params = dist_worker.train("dist_sync", rank=0, n=1)
    for got, want in zip(params, _numpy_training()):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_module_dist_async_refuses():
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    mod = mx.mod.Module(net, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (2, 3))])
    mod.init_params()
    with pytest.raises(AsyncKVStoreError, match="dist_sync"):
        mod.init_optimizer(kvstore="dist_async")


def test_one_worker_dist_sync_module_matches_numpy():
    params = dist_worker.train_module("dist_sync", rank=0, n=1)
    for got, want in zip(params, _numpy_training()):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_mxnet_launcher_environment_without_a_job_refuses(monkeypatch):
    """MXNet's tools/launch.py sets DMLC_NUM_WORKER but starts no jax.distributed job:
    training alone on each worker would be silently wrong."""
    monkeypatch.setenv("DMLC_NUM_WORKER", "2")
    with pytest.raises(mx.kvstore.KVStoreError, match="gluonjax.launch -n 2"):
        mx.kv.create("dist_sync")
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    mod = mx.mod.Module(net, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (2, 3))])
    mod.init_params()
    with pytest.raises(mx.kvstore.KVStoreError, match="not part of a jax.distributed job"):
        mod.init_optimizer(kvstore="dist_sync")
    monkeypatch.setenv("DMLC_NUM_WORKER", "1")
    assert mx.kv.create("dist_sync").num_workers == 1
