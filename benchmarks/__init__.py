"""gluonjax benchmarks: ``python -m benchmarks`` (or ``make bench``).

Every row is timed in the same run as its baseline (raw ``jax.jit``, plain
``jax.numpy`` op by op, or a pure JAX + optax step) and printed as a ratio next
to the target an issue sets. Timings are never asserted in tests.
"""
