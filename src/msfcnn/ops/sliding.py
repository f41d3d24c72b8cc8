"""Sliding-window views shared by the numpy kernels of conv, depthwise conv and pooling.

All views are built with stride tricks on a padded copy of the input, so no kernel loops over
output pixels in Python.
"""

from __future__ import annotations

import numpy as np

from .base import Window


def pad_hw(x: np.ndarray, win: Window, value) -> np.ndarray:
    """Pad the H and W axes of an (H, W, C) array by the window's explicit pads with `value`."""
    top, left, bottom, right = win.pads
    if not any(win.pads):
        return x
    return np.pad(x, ((top, bottom), (left, right), (0, 0)), constant_values=value)


def windows(padded: np.ndarray, win: Window) -> np.ndarray:
    """Read-only view (Ho, Wo, kh, kw, C) of every window position over an already padded array
    (a dilated window's taps every dilation-th position of its extent)."""
    (eh, ew), (dh, dw) = win.extent, win.dilations
    sh, sw = win.strides
    view = np.lib.stride_tricks.sliding_window_view(padded, (eh, ew), axis=(0, 1))[::sh, ::sw, :, ::dh, ::dw]
    return view.transpose(0, 1, 3, 4, 2)  # (Ho, Wo, C, kh, kw) -> (Ho, Wo, kh, kw, C)


def tap_slices(padded: np.ndarray, win: Window, out_hw: tuple[int, int]):
    """Yield ((i, j), strided (Ho, Wo, C) view of the input under tap (i, j)) for every kernel tap.

    Accumulating tap by tap keeps the working set at one output-sized array (depthwise, pooling).
    """
    kh, kw = win.kernel
    sh, sw = win.strides
    dh, dw = win.dilations
    ho, wo = out_hw
    for i in range(kh):
        for j in range(kw):
            y, x = i * dh, j * dw
            yield (i, j), padded[y:y + sh * (ho - 1) + 1:sh, x:x + sw * (wo - 1) + 1:sw]


def valid_tap_counts(win: Window, in_hw: tuple[int, int], out_hw: tuple[int, int]) -> np.ndarray:
    """(Ho, Wo) number of window taps that fall inside the unpadded input (avg-pool divisors)."""
    h, w = in_hw
    top, left, _, _ = win.pads
    rows = _valid_extent(h, top, win.kernel[0], win.strides[0], out_hw[0])
    cols = _valid_extent(w, left, win.kernel[1], win.strides[1], out_hw[1])
    return np.outer(rows, cols)


def _valid_extent(size: int, pad_before: int, k: int, stride: int, n_out: int) -> np.ndarray:
    start = np.arange(n_out) * stride - pad_before
    return np.minimum(start + k, size) - np.maximum(start, 0)
