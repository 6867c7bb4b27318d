"""The tape that eager ops record into (below ``nd``; the engine is ``autograd``).

* :mod:`.state`: per-thread recording / training flags, the trace scope, deferral;
* :mod:`.node`: tape nodes, their kinds, and the one place a pure function becomes a
  node with its VJP (:func:`.node.with_vjp`, :func:`.node.pullback`).

Nothing here imports ``NDArray``: arrays are read through their tape fields only.
"""
