"""The paired bootstrap over questions: how sure a difference between two configurations on one question set is.

Every benchmark in bench/ reports gains through it too; the sweep (rag/eval/tune.py) needs it in the product, where a
"best" configuration that wins by noise must not be sold as a win. Questions are resampled with
replacement and both configurations' scores move together (paired), so question difficulty cancels out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000


@dataclass(frozen=True)
class Interval:
    """Mean of b - a over the questions both scored, and its 95% interval."""

    mean: float
    lo: float
    hi: float
    n: int

    @property
    def excludes_zero(self) -> bool:
        """The difference is unlikely to be noise at this set size."""
        return self.lo > 0 or self.hi < 0

    def words(self) -> str:
        """`+0.012 [+0.004, +0.020] *`: the star marks an interval that excludes 0."""
        return f"{self.mean:+.3f} [{self.lo:+.3f}, {self.hi:+.3f}]" + (" *" if self.excludes_zero else "")

    def as_json(self) -> dict[str, float | int | bool]:
        return {"mean": self.mean, "lo": self.lo, "hi": self.hi, "n": self.n, "excludes_zero": self.excludes_zero}


def paired_interval(
    a: Mapping[str, float], b: Mapping[str, float], resamples: int = RESAMPLES, seed: int = 0
) -> Interval:
    """The paired-bootstrap 95% interval of mean(b - a) over the question ids both have.

    Deterministic for a seed, so a stored sweep shows the same interval each time it is opened.
    """
    ids = sorted(set(a) & set(b))
    return interval_of_differences([b[q] - a[q] for q in ids], resamples, seed)


def interval_of_differences(diff: Sequence[float], resamples: int = RESAMPLES, seed: int = 0) -> Interval:
    """The bootstrap 95% interval of the mean of per-question differences (already paired, in one order).

    The one resampling loop: `paired_interval` and the benchmarks, which hold their scores as aligned arrays,
    both come here, so every interval the product and bench/ print is computed the same way.
    """
    values = np.asarray(diff, dtype=float)
    if not len(values):
        return Interval(0.0, 0.0, 0.0, 0)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return Interval(float(values.mean()), float(lo), float(hi), len(values))
