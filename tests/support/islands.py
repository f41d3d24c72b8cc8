"""The bound on integer values computed after a float island (DEQUANTIZE ... QUANTIZE).

A float32 sum depends on its order, and kernels that add the same terms in another order (the
interpreters' Eigen and BLAS code, numpy's, C's, or one plan's tiles against another's) may put a
value that lies on a quantisation boundary on the other side of it. The int8 (or int16) values
after an island may then differ by 1 on rare values; docs/numerics.md, "Float islands"."""

from __future__ import annotations

import numpy as np

# at most this fraction of the values may be 1 off
INT_FLIP_FRACTION = 0.01


def assert_within_island_bound(ours: np.ndarray, theirs: np.ndarray) -> None:
    a = np.asarray(ours).reshape(-1).astype(np.int32)
    b = np.asarray(theirs).reshape(-1).astype(np.int32)
    assert a.shape == b.shape
    diff = np.abs(a - b)
    assert diff.max(initial=0) <= 1, f"values differ by up to {diff.max()}"
    assert (diff > 0).mean() <= INT_FLIP_FRACTION, f"{int((diff > 0).sum())} of {diff.size} values off by 1"
