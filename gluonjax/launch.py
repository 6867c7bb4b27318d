"""``python -m gluonjax.launch``: start a multi-process job (MXNet's ``tools/launch.py``).

::

    python -m gluonjax.launch -n 2 python train.py --epochs 3           # this machine
    python -m gluonjax.launch -n 4 -H hosts --launcher ssh python train.py
    python -m gluonjax.launch -n 4 -H hosts --launcher mpi python train.py
    python -m gluonjax.launch -n 4 -H hosts --launcher ssh --dry-run python train.py

Each worker gets the environment ``import gluonjax`` reads to join the job with
``jax.distributed.initialize`` (:mod:`gluonjax._distributed`): ``GLUONJAX_COORDINATOR``
(worker 0's host and ``--port``), ``GLUONJAX_NUM_PROCESSES``, ``GLUONJAX_PROCESS_ID``,
and MXNet's names ``DMLC_ROLE=worker``, ``DMLC_NUM_WORKER``, ``DMLC_WORKER_ID``,
``DMLC_TASK_ID``, ``DMLC_PS_ROOT_URI``/``DMLC_PS_ROOT_PORT`` (the coordinator: there
are no parameter servers, ``DMLC_NUM_SERVER=0``). With ``mpi`` the rank comes from
``OMPI_COMM_WORLD_RANK``. ``--gpus-per-worker K`` gives each worker K accelerators of
its machine (jax's ``JAX_LOCAL_DEVICE_IDS``, applied by ``jax.distributed.initialize``;
with ``mpi`` the worker computes them from ``OMPI_COMM_WORLD_LOCAL_RANK``).

The launcher supervises the workers it starts (``local``; with ``ssh``/``mpi`` the ssh
or mpirun processes): their output lines are prefixed with ``[rank]``; when one
exits with an error the others are stopped and the launcher exits with that code;
``--timeout`` bounds the whole job (exit code 124); Ctrl-C stops every worker.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time

__all__ = ["main", "worker_env", "device_ids", "build_commands", "LaunchError"]


class LaunchError(Exception):
    """A launcher argument or hostfile that cannot start a job."""


def free_port(host="127.0.0.1"):
    """A TCP port free on ``host`` now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def device_ids(local_rank, gpus_per_worker):
    """The accelerator ids of the worker that is ``local_rank``-th on its machine, with
    ``gpus_per_worker`` each: ``[local_rank * k, ..., local_rank * k + k - 1]``.

    Examples
    --------
    >>> device_ids(1, 2)
    [2, 3]
    """
    k = int(gpus_per_worker)
    return list(range(local_rank * k, (local_rank + 1) * k))


def worker_env(
    num_workers,
    coordinator_host,
    port,
    rank=None,
    heartbeat=None,
    gpus_per_worker=None,
    local_rank=None,
):
    """The variables worker ``rank`` runs with (without the rank: those common to all).

    ``gpus_per_worker``: each worker gets that many accelerators of its machine,
    ``GLUONJAX_GPUS_PER_WORKER``; with ``local_rank`` (the worker's place among the
    workers of its machine) also jax's ``JAX_LOCAL_DEVICE_IDS`` (see :func:`device_ids`),
    which ``jax.distributed.initialize`` applies. Without ``local_rank`` (``mpi``) the
    worker reads its local rank from MPI when it joins the job.

    Examples
    --------
    >>> env = worker_env(2, '127.0.0.1', 9000, rank=1)
    >>> env['GLUONJAX_COORDINATOR'], env['DMLC_WORKER_ID'], env['DMLC_ROLE']
    ('127.0.0.1:9000', '1', 'worker')
    >>> worker_env(2, '127.0.0.1', 9000, rank=1, gpus_per_worker=2, local_rank=1)[
    ...     'JAX_LOCAL_DEVICE_IDS']
    '2,3'
    """
    env = {
        "GLUONJAX_COORDINATOR": f"{coordinator_host}:{port}",
        "GLUONJAX_NUM_PROCESSES": str(num_workers),
        "DMLC_ROLE": "worker",
        "DMLC_NUM_WORKER": str(num_workers),
        "DMLC_NUM_SERVER": "0",
        "DMLC_PS_ROOT_URI": str(coordinator_host),
        "DMLC_PS_ROOT_PORT": str(port),
        "PYTHONUNBUFFERED": "1",
    }
    if heartbeat is not None:
        env["GLUONJAX_HEARTBEAT_TIMEOUT"] = str(int(heartbeat))
    if rank is not None:
        env["GLUONJAX_PROCESS_ID"] = env["DMLC_WORKER_ID"] = env["DMLC_TASK_ID"] = str(rank)
    if gpus_per_worker:
        env["GLUONJAX_GPUS_PER_WORKER"] = str(int(gpus_per_worker))
        if local_rank is not None:
            env["GLUONJAX_LOCAL_RANK"] = str(local_rank)
            ids = device_ids(local_rank, gpus_per_worker)
            env["JAX_LOCAL_DEVICE_IDS"] = ",".join(map(str, ids))
    return env


def read_hostfile(path):
    """``[(host, ssh_port or None)]`` from a hostfile: one ``host`` or ``host:port`` per
    line; blank lines and ``#`` comments are skipped."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise LaunchError(f"cannot read hostfile {path!r}: {e.strerror}") from None
    hosts = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        host, _, port = line.partition(":")
        hosts.append((host, int(port) if port else None))
    if not hosts:
        raise LaunchError(f"hostfile {path!r} lists no hosts")
    return hosts


def _passed_env(args):
    """Variables given with ``--env NAME`` (copied from here) and ``--env-worker NAME:VALUE``."""
    out = {}
    for name in args.env:
        if name in os.environ:
            out[name] = os.environ[name]
    for pair in args.env_worker:
        name, sep, value = pair.partition(":")
        if not sep:
            raise LaunchError(f"--env-worker takes NAME:VALUE, got {pair!r}")
        out[name] = value
    return out


def build_commands(args):
    """``[(rank or None, argv, env)]``: the processes to start, for ``args`` of :func:`parse`.

    ``local`` gives one entry per worker (run here, ``env`` added to this environment);
    ``ssh`` one ``ssh`` command per worker (workers assigned to hosts in turn, worker 0
    on the first host, which runs the coordinator); ``mpi`` one ``mpirun`` command.
    """
    n = args.num_workers
    command = list(args.command)
    extra = _passed_env(args)
    gpus = args.gpus_per_worker
    if args.launcher == "local":
        port = args.port or free_port()
        return [
            (
                r,
                command,
                {
                    **worker_env(n, "127.0.0.1", port, r, args.heartbeat_timeout, gpus, r),
                    **extra,
                },
            )
            for r in range(n)
        ]
    if not args.hostfile:
        raise LaunchError(f"--launcher {args.launcher} needs a hostfile: -H FILE")
    hosts = read_hostfile(args.hostfile)
    port = args.port or 9091
    root = hosts[0][0]
    workdir = args.sync_dst_dir or os.getcwd()
    if args.launcher == "ssh":
        out = []
        for r in range(n):
            host, ssh_port = hosts[r % len(hosts)]
            local = r // len(hosts)  # workers go to the hosts in turn
            env = {**worker_env(n, root, port, r, args.heartbeat_timeout, gpus, local), **extra}
            assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
            remote = f"cd {shlex.quote(workdir)} && env {assigns} {shlex.join(command)}"
            ssh = ["ssh", "-o", "StrictHostKeyChecking=no"]
            if ssh_port:
                ssh += ["-p", str(ssh_port)]
            out.append((r, ssh + [host, remote], {}))
        return out
    env = {**worker_env(n, root, port, None, args.heartbeat_timeout, gpus), **extra}
    mpirun = ["mpirun", "-n", str(n), "--hostfile", args.hostfile, "--tag-output"]
    mpirun += ["-wdir", workdir]
    for k, v in env.items():
        mpirun += ["-x", f"{k}={v}"]
    return [(None, mpirun + command, {})]


def parse(argv=None):
    """The launcher's arguments (MXNet ``tools/launch.py``'s names where they exist)."""
    p = argparse.ArgumentParser(
        prog="python -m gluonjax.launch",
        description="Start a gluonjax job of several processes on jax.distributed.",
    )
    p.add_argument("-n", "--num-workers", type=int, required=True, help="number of workers")
    p.add_argument(
        "-s", "--num-servers", type=int, default=0, help="accepted for MXNet; no servers run"
    )
    p.add_argument("-H", "--hostfile", help="hosts (host or host:sshport per line), ssh/mpi")
    p.add_argument(
        "--launcher", choices=["local", "ssh", "mpi"], help="default: ssh with -H, else local"
    )
    p.add_argument("--port", type=int, default=0, help="coordinator port (local: a free one)")
    p.add_argument("--timeout", type=float, default=0, help="seconds before the job is killed")
    p.add_argument(
        "--heartbeat-timeout", type=int, default=10, help="seconds before a dead peer is noticed"
    )
    p.add_argument(
        "--gpus-per-worker",
        type=int,
        default=0,
        metavar="K",
        help="give each worker K accelerators of its machine (worker i on a machine: "
        "ids i*K..i*K+K-1; default: every worker sees all of them)",
    )
    p.add_argument("--sync-dst-dir", help="working directory on the hosts (default: this one)")
    p.add_argument("--env", action="append", default=[], help="NAME: pass this variable")
    p.add_argument("--env-worker", action="append", default=[], help="NAME:VALUE for workers")
    p.add_argument("--env-server", action="append", default=[], help="accepted for MXNet")
    p.add_argument("--dry-run", action="store_true", help="print the commands, start nothing")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the command each worker runs")
    args = p.parse_args(argv)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command:
        p.error("give the command to run, e.g. python train.py")
    if args.num_workers < 1:
        p.error(f"-n must be at least 1, got {args.num_workers}")
    if args.gpus_per_worker < 0:
        p.error(f"--gpus-per-worker must be at least 1, got {args.gpus_per_worker}")
    if args.launcher is None:
        args.launcher = "ssh" if args.hostfile else "local"
    return args


def _pump(stream, prefix, sink, lock):
    for raw in iter(stream.readline, b""):
        with lock:
            sink.write(prefix + raw.decode("utf-8", "replace"))
            sink.flush()
    stream.close()


def _first_failure(procs, exited, failed, window=0.5):
    """The failed process to blame: the first to exit. Its peers fail just after it (their
    collectives lose it), so among failures within ``window`` seconds of the first one, a
    death by signal (a kill, a crash) is preferred to an exit code."""
    time.sleep(0.05)  # let the waiters note the exit times
    end = time.monotonic() + window
    for p in procs:  # give peers that are failing right now the chance to show it
        try:
            p.wait(max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    failed = [i for i, p in enumerate(procs) if p.poll() not in (None, 0)] or failed
    start = min(exited.get(i, float("inf")) for i in failed)
    close = [i for i in failed if exited.get(i, float("inf")) <= start + window]
    return min(close or failed, key=lambda i: (procs[i].returncode >= 0, exited.get(i, 0), i))


def _note_exit(proc, index, exited):
    proc.wait()
    exited[index] = time.monotonic()


def _stop(procs, grace=3.0):
    """SIGTERM every live process group, SIGKILL what is left after ``grace`` seconds."""
    live = [p for p in procs if p.poll() is None]
    for p in live:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    end = time.monotonic() + grace
    for p in live:
        try:
            p.wait(max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def _code(rc):
    return 128 - rc if rc < 0 else rc


def supervise(entries, timeout=0, sink=None):
    """Run ``entries`` (from :func:`build_commands`) and return the job's exit code.

    0 when every process exits 0; else the first failing process's code (a signal
    ``s`` gives ``128 + s``) after stopping the others; 124 after ``timeout`` seconds.
    """
    sink = sys.stdout if sink is None else sink
    lock = threading.Lock()
    procs, pumps, names = [], [], []
    exited = {}  # index -> when it exited (a peer of a dead worker fails just after it)
    say = _say(sink, lock)
    try:
        for i, (rank, argv, env) in enumerate(entries):
            label = f"[{rank}] " if rank is not None else ""
            proc = subprocess.Popen(
                argv,
                env={**os.environ, **env},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stopped as a whole
            )
            procs.append(proc)
            names.append(f"worker {rank}" if rank is not None else f"process {i}")
            t = threading.Thread(target=_pump, args=(proc.stdout, label, sink, lock), daemon=True)
            t.start()
            pumps.append(t)
            waiter = threading.Thread(target=_note_exit, args=(proc, i, exited), daemon=True)
            waiter.start()
        deadline = time.monotonic() + timeout if timeout else None
        while True:
            codes = [p.poll() for p in procs]
            failed = [i for i, c in enumerate(codes) if c not in (None, 0)]
            if failed:
                first = _first_failure(procs, exited, failed)
                code = _code(procs[first].returncode)
                say(f"{names[first]} exited with code {code}; stopping the other workers")
                _stop(procs)
                return code
            if all(c == 0 for c in codes):
                return 0
            if deadline is not None and time.monotonic() > deadline:
                say(f"the job ran past --timeout {timeout:g} s; stopping every worker")
                _stop(procs)
                return 124
            time.sleep(0.05)
    except KeyboardInterrupt:
        say("interrupted; stopping every worker")
        _stop(procs)
        return 130
    finally:
        _stop(procs)
        for t in pumps:
            t.join(timeout=2)


def _say(sink, lock):
    def say(msg):
        with lock:
            sink.write(f"[launch] {msg}\n")
            sink.flush()

    return say


def main(argv=None):
    """Parse ``argv``, then start and supervise the job (or print it with ``--dry-run``)."""
    args = parse(argv)
    try:
        entries = build_commands(args)
    except LaunchError as e:
        print(f"gluonjax.launch: {e}", file=sys.stderr)
        return 2
    if args.dry_run:
        for _rank, argv_, env in entries:
            assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
            print((f"{assigns} " if assigns else "") + shlex.join(argv_))
        return 0
    return supervise(entries, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
