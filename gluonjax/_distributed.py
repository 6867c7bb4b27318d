"""Joining a multi-process job: ``jax.distributed`` from the launcher's environment.

``python -m gluonjax.launch`` starts each worker with ``GLUONJAX_COORDINATOR``
(``host:port`` of the coordinator, on worker 0), ``GLUONJAX_NUM_PROCESSES`` and
``GLUONJAX_PROCESS_ID``, plus MXNet's ``DMLC_*`` names. ``import gluonjax``
calls :func:`init_from_env`, which runs ``jax.distributed.initialize`` from them.
It must run at import: jax accepts ``initialize`` only before its first computation,
and a training script computes (``net.initialize``) long before its Trainer makes
the ``dist_sync`` store. Without ``GLUONJAX_COORDINATOR`` nothing happens (one
process), and a user who called ``jax.distributed.initialize`` before importing
gluonjax keeps their setup.

This module imports nothing that computes, so that it can run first.
"""

from __future__ import annotations

import atexit
import os
import sys

from .base import MXNetError

__all__ = [
    "init_from_env",
    "job_from_env",
    "local_device_ids_from_env",
    "is_initialized",
    "DistributedInitError",
]

#: the environment the launcher sets (MXNet's ``DMLC_*`` names are read as fallbacks)
ENV_COORDINATOR = "GLUONJAX_COORDINATOR"
ENV_NUM_PROCESSES = "GLUONJAX_NUM_PROCESSES"
ENV_PROCESS_ID = "GLUONJAX_PROCESS_ID"
ENV_HEARTBEAT = "GLUONJAX_HEARTBEAT_TIMEOUT"
ENV_INIT_TIMEOUT = "GLUONJAX_INIT_TIMEOUT"

_RANK_VARS = (ENV_PROCESS_ID, "DMLC_WORKER_ID", "DMLC_TASK_ID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")
_SIZE_VARS = (ENV_NUM_PROCESSES, "DMLC_NUM_WORKER", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE")


class DistributedInitError(MXNetError, ValueError):
    """The launcher's environment is incomplete, or ``jax.distributed`` cannot start."""


def _first(env, names):
    for n in names:
        v = env.get(n)
        if v not in (None, ""):
            return n, v
    return None, None


def job_from_env(env=None):
    """``(coordinator, num_processes, process_id)`` from the launcher's variables, or None.

    Parameters
    ----------
    env : mapping, optional
        The environment (``os.environ`` by default).

    Returns
    -------
    tuple or None
        None when ``GLUONJAX_COORDINATOR`` is not set (not a launched worker).

    Examples
    --------
    >>> from gluonjax._distributed import job_from_env
    >>> job_from_env({'GLUONJAX_COORDINATOR': '127.0.0.1:9000', 'DMLC_NUM_WORKER': '2',
    ...               'DMLC_WORKER_ID': '1'})
    ('127.0.0.1:9000', 2, 1)
    >>> job_from_env({}) is None
    True
    """
    env = os.environ if env is None else env
    coordinator = env.get(ENV_COORDINATOR)
    if not coordinator:
        return None
    err = DistributedInitError
    size_name, size = _first(env, _SIZE_VARS)
    rank_name, rank = _first(env, _RANK_VARS)
    if size is None or rank is None:
        raise err(
            f"{ENV_COORDINATOR}={coordinator} is set but the number of processes "
            f"({'/'.join(_SIZE_VARS)}) or this process's id ({'/'.join(_RANK_VARS)}) is "
            f"missing; start workers with `python -m gluonjax.launch -n N ...`"
        )
    try:
        size, rank = int(size), int(rank)
    except ValueError:
        raise err(f"{size_name}={size!r} and {rank_name}={rank!r} must be integers") from None
    if not 0 <= rank < size:
        raise err(f"{rank_name}={rank} is outside [0, {size_name}={size})")
    return coordinator, size, rank


ENV_GPUS_PER_WORKER = "GLUONJAX_GPUS_PER_WORKER"
ENV_LOCAL_RANK = "GLUONJAX_LOCAL_RANK"
ENV_JAX_DEVICE_IDS = "JAX_LOCAL_DEVICE_IDS"
_LOCAL_RANK_VARS = (
    ENV_LOCAL_RANK,
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "MPI_LOCALRANKID",
    "SLURM_LOCALID",
)


def local_device_ids_from_env(env=None):
    """The accelerator ids this worker may use, from the launcher's variables, or None.

    ``JAX_LOCAL_DEVICE_IDS`` (``"2,3"``, set per worker by ``python -m gluonjax.launch
    --gpus-per-worker K`` with the ``local`` and ``ssh`` launchers) is taken as is.
    Else ``GLUONJAX_GPUS_PER_WORKER=K`` (``mpi``) with this worker's rank among the
    workers of its machine (``GLUONJAX_LOCAL_RANK``, ``OMPI_COMM_WORLD_LOCAL_RANK``,
    ``MPI_LOCALRANKID`` or ``SLURM_LOCALID``) gives ``[i*K, ..., i*K + K - 1]``.
    None: every device the process sees (without a launcher's assignment).

    Examples
    --------
    >>> from gluonjax._distributed import local_device_ids_from_env
    >>> local_device_ids_from_env({'JAX_LOCAL_DEVICE_IDS': '2,3'})
    [2, 3]
    >>> local_device_ids_from_env({'GLUONJAX_GPUS_PER_WORKER': '2',
    ...                            'OMPI_COMM_WORLD_LOCAL_RANK': '1'})
    [2, 3]
    >>> local_device_ids_from_env({}) is None
    True
    """
    env = os.environ if env is None else env
    err = DistributedInitError
    ids = env.get(ENV_JAX_DEVICE_IDS, "")
    if ids.strip():
        try:
            return [int(i) for i in ids.split(",")]
        except ValueError:
            raise err(
                f"{ENV_JAX_DEVICE_IDS}={ids!r} must be comma-separated device ids, e.g. 0,1"
            ) from None
    k = env.get(ENV_GPUS_PER_WORKER, "")
    if not k.strip():
        return None
    name, local = _first(env, _LOCAL_RANK_VARS)
    if local is None:
        raise err(
            f"{ENV_GPUS_PER_WORKER}={k} is set but this worker's rank on its machine "
            f"({'/'.join(_LOCAL_RANK_VARS)}) is missing; start the workers with "
            f"`python -m gluonjax.launch --gpus-per-worker {k} ...`"
        )
    try:
        k, local = int(k), int(local)
    except ValueError:
        raise err(f"{ENV_GPUS_PER_WORKER}={k!r} and {name}={local!r} must be integers") from None
    if k < 1 or local < 0:
        raise err(f"{ENV_GPUS_PER_WORKER}={k} must be at least 1 and {name}={local} at least 0")
    return list(range(local * k, (local + 1) * k))


def is_initialized():
    """Whether this process is part of a ``jax.distributed`` job."""
    import jax

    try:
        return jax.distributed.is_initialized()
    except AttributeError:  # older jax
        from jax._src import distributed

        return distributed.global_state.client is not None


def init_from_env(env=None):
    """Run ``jax.distributed.initialize`` when the launcher's environment says so.

    CPU collectives across processes use gloo (``jax_cpu_collectives_implementation``).
    A worker given accelerators by the launcher (:func:`local_device_ids_from_env`)
    sees only those (``local_device_ids``: jax restricts its CUDA/ROCm devices; CPU
    devices are not affected).
    Heartbeat and shutdown timeouts are short (``GLUONJAX_HEARTBEAT_TIMEOUT``, default
    10 s) so that a worker whose peer died fails instead of waiting minutes.

    Returns
    -------
    bool
        True when this call joined a job.
    """
    job = job_from_env(env)
    if job is None or is_initialized():
        return False
    import jax

    env = os.environ if env is None else env
    coordinator, size, rank = job
    device_ids = local_device_ids_from_env(env)
    heartbeat = int(env.get(ENV_HEARTBEAT, "10"))
    init_timeout = int(env.get(ENV_INIT_TIMEOUT, "120"))
    try:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except (AttributeError, ValueError):  # a jax without gloo: CPU collectives unavailable
        pass
    try:
        jax.distributed.initialize(
            coordinator_address=coordinator,
            num_processes=size,
            process_id=rank,
            local_device_ids=device_ids,
            initialization_timeout=init_timeout,
            heartbeat_timeout_seconds=heartbeat,
            shutdown_timeout_seconds=heartbeat,
        )
    except RuntimeError as e:
        raise DistributedInitError(
            f"worker {rank} of {size} could not join the job at {ENV_COORDINATOR}="
            f"{coordinator} ({e}); is gluonjax imported before any jax computation, and "
            f"did every worker start?"
        ) from e
    atexit.register(_fail_fast)  # runs before jax's shutdown (atexit is last-in, first-out)
    return True


def _fail_fast():
    """Leave at once when the script died of an uncaught exception.

    jax's exit handler waits at a shutdown barrier for every worker; a worker that
    failed would wait there (up to the heartbeat timeout) while the others wait for
    it in their next collective. Leaving now lets the launcher see the failure and
    stop the job.
    """
    if getattr(sys, "last_exc", None) is None and getattr(sys, "last_value", None) is None:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(1)
