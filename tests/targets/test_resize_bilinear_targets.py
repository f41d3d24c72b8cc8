"""RESIZE_BILINEAR (fixtures/make_resize_bilinear_models.py) on an emulated Cortex-M4: the
generated C, its fixed-point kernel included, bit-exact with the numpy executor in the arena the
plan predicts: the half-pixel chain, the sweep's 45 resizes (every flag and size), the 16x8 chain
(int64 sums) and the uint8 sweep (the float formula on the board's FPU)."""

import pytest

from support import cache
from support.c_build import check_c
from support.paths import FIXTURES
from msfcnn.fusion import solvers


@pytest.mark.parametrize("name", ["bilinear_half_pixel", "bilinear_sweep", "bilinear_i16_chain", "u8_bilinear_sweep"])
def test_resize_bilinear_on_cortex_m4(name):
    graph = cache.model(str(FIXTURES / "models" / f"{name}.tflite"))
    check_c(graph, solvers.min_peak_ram(cache.dag(graph)).blocks, target="cortex-m4")
