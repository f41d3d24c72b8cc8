"""Channel slices and a channel shuffle on an emulated Cortex-M4 (`fixtures/make_split_models.py`,
`make_shuffle_models.py`): the generated C of the least-RAM plan (and of a random plan), bit-exact
with the numpy executor on every output (which tests/integration/test_split_ops.py and
test_shuffle_ops.py check against LiteRT and TFLite Micro), in the predicted arena; the
ShuffleNet-style block (int8), a 16x8 map split into two heads (two outputs), a ShuffleNet v2
unit with its channel shuffle, a SPACE_TO_DEPTH and a DEPTH_TO_SPACE."""

import pytest

from support import cache
from support.c_build import check_c
from support.fused_cases import random_plan
from support.paths import FIXTURES
from msfcnn.fusion import solvers


@pytest.mark.parametrize("name", ["split_shuffle", "split_i16"])
def test_channel_slices_on_cortex_m4(name):
    graph = cache.model(str(FIXTURES / "models" / f"{name}.tflite"))
    dag = cache.dag(graph)
    check_c(graph, solvers.min_peak_ram(dag).blocks, target="cortex-m4")
    check_c(graph, random_plan(dag, 3), target="cortex-m4", seed=3)


@pytest.mark.parametrize("name", ["shuffle_unit", "space_to_depth_int8", "depth_to_space_int8"])
def test_channel_shuffle_and_space_to_depth_on_cortex_m4(name):
    """A ShuffleNet v2 unit (channel slices, then a shuffle as one channel gather) and a
    SPACE_TO_DEPTH or a DEPTH_TO_SPACE between convs under the least-RAM plan, which fuses the
    gather and the SPACE_TO_DEPTH (fixtures/make_shuffle_models.py)."""
    graph = cache.model(str(FIXTURES / "models" / f"{name}.tflite"))
    check_c(graph, solvers.min_peak_ram(cache.dag(graph)).blocks, target="cortex-m4")
