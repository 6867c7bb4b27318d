"""Statistical checks of random generators (chi-square, mean and variance tests)."""

from __future__ import annotations

import numpy as np

__all__ = [
    "gen_buckets_probs_with_ppf",
    "mean_check",
    "var_check",
    "chi_square_check",
    "verify_generator",
]


def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` equal-probability buckets from a quantile function ``ppf``.

    Returns
    -------
    (buckets, probs)
        ``buckets[i] = (ppf(i/n), ppf((i+1)/n))`` and ``probs = [1/n] * n``.

    Examples
    --------
    >>> from gluonjax.test_utils import gen_buckets_probs_with_ppf
    >>> gen_buckets_probs_with_ppf(lambda q: 10 * q, 2)
    ([(0.0, 5.0), (5.0, 10.0)], [0.5, 0.5])
    """
    if nbuckets <= 0:
        raise ValueError(f"nbuckets must be positive, got {nbuckets}")
    probs = [1.0 / nbuckets for _ in range(nbuckets)]
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets))) for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator, mu, sigma, nsamples=1000000):
    """True if the mean of ``generator(nsamples)`` is within 3 standard errors of ``mu``."""
    mean = np.array(generator(nsamples)).mean()
    half = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - half < mean < mu + half)


def var_check(generator, sigma, nsamples=1000000):
    """True if the sample variance is within 3 standard errors of ``sigma**2``."""
    var = np.array(generator(nsamples)).var(ddof=1)
    half = 3 * np.sqrt(2 * sigma**4 / (nsamples - 1))
    return bool(sigma**2 - half < var < sigma**2 + half)


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Pearson's chi-square test of ``generator(nsamples)`` against bucket probabilities.

    Parameters
    ----------
    generator : callable
        ``generator(n)`` returns ``n`` samples.
    buckets : list
        ``(low, high)`` ranges (continuous, ascending, disjoint) or the values of a
        discrete distribution.
    probs : list
        The probability of each bucket.
    nsamples : int

    Returns
    -------
    (p, observed, expected)
        The p-value and the observed / expected counts per bucket.
    """
    import scipy.stats as ss

    if not isinstance(buckets, list) or len(probs) != len(buckets):
        raise ValueError("buckets must be a list with one probability in probs per bucket")
    samples = np.asarray(generator(nsamples))
    expected = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    observed = np.zeros(len(buckets), dtype=np.int64)
    if isinstance(buckets[0], (list, tuple)):
        edges = np.zeros(2 * len(buckets), dtype=np.float32)
        for i, (lo, hi) in enumerate(buckets):
            if lo > hi or (i + 1 < len(buckets) and hi > buckets[i + 1][0]):
                raise ValueError(f"buckets must be ascending and disjoint: {buckets}")
            edges[2 * i], edges[2 * i + 1] = lo, hi
        ids = np.searchsorted(edges, samples, side="right") // 2
        for i in range(len(buckets)):
            observed[i] = (ids == i).sum()
    else:
        for i, b in enumerate(buckets):
            observed[i] = (samples == b).sum()
    # Pearson's statistic computed directly: scipy >= 1.9's ``chisquare`` refuses expected
    # counts whose sum differs from the observed sum (truncation, samples outside buckets)
    exp = expected.astype(np.float64)
    stat = float(np.sum((observed - exp) ** 2 / exp))
    p = float(ss.chi2.sf(stat, len(buckets) - 1))
    return p, observed, expected


def verify_generator(
    generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2, alpha=0.05
):
    """Run :func:`chi_square_check` ``nrepeat`` times; fail unless at least
    ``nrepeat * success_rate`` runs have p > ``alpha``. Returns the p-values."""
    results = [
        chi_square_check(generator, buckets, probs, nsamples=nsamples) for _ in range(nrepeat)
    ]
    pvals = [r[0] for r in results]
    if (np.array(pvals) > alpha).sum() < nrepeat * success_rate:
        raise AssertionError(
            f"generator test failed: chi-square p={pvals}, observed="
            f"{[r[1].tolist() for r in results]}, expected={[r[2].tolist() for r in results]}, "
            f"buckets={buckets}, probs={probs}"
        )
    return pvals
