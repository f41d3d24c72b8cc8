"""SPACE_TO_DEPTH (YOLO's reorg) as a window op of kernel and stride b, and DEPTH_TO_SPACE (an
upsampling, never fused), on the fixtures of `fixtures/make_shuffle_models.py` (int8 with block 2,
float32 with block 3):

- every output of the numpy executor, unfused and under fused plans (least RAM, which fuses a
  SPACE_TO_DEPTH, and random ones), bit-exact with the LiteRT interpreter (float32: within float32 rounding) and
  with TFLite Micro under `--numerics tflm`, in the predicted arena;
- the generated C on the host bit-exact with numpy;
- a map whose H is not a multiple of the block, or channels not of b * b, refused in one line.
"""
from __future__ import annotations

import pytest

from support import cache
from support.interpreter_cases import check_c_least_ram_and_random, check_unfused_and_fused
from support.paths import FIXTURES
from msfcnn.errors import UserError
from msfcnn.ops.depth_to_space import DepthToSpace
from msfcnn.ops.space_to_depth import SpaceToDepth

MODELS = {name: FIXTURES / "models" / f"{name}.tflite" for name in ("space_to_depth_int8", "space_to_depth_float",
                                                                      "depth_to_space_int8", "depth_to_space_float")}
OP_TYPE = {name: DepthToSpace if name.startswith("depth_") else SpaceToDepth for name in MODELS}
CASES = [(name, numerics) for name in MODELS for numerics in ("litert", "tflm")]


def test_the_fixtures_import_one_block_move():
    blocks = {name: [(n.op.block, n.shape) for n in cache.model(str(path)).nodes if isinstance(n.op, OP_TYPE[name])]
              for name, path in MODELS.items()}
    assert blocks == {"space_to_depth_int8": [(2, (4, 3, 16))], "space_to_depth_float": [(3, (3, 2, 27))],
                      "depth_to_space_int8": [(2, (8, 6, 4))], "depth_to_space_float": [(3, (9, 6, 2))]}


@pytest.mark.parametrize("name, numerics", CASES, ids=[f"{n}-{m}" for n, m in CASES])
def test_every_output_matches_the_interpreter_unfused_and_fused(name, numerics):
    check_unfused_and_fused(MODELS[name], numerics, OP_TYPE[name], fuses=OP_TYPE[name] is SpaceToDepth,
                            batch=tuple(MODELS[n] for n, m in CASES if m == numerics))


@pytest.mark.parametrize("name", MODELS)
def test_c_on_the_host_is_bit_exact(name):
    check_c_least_ram_and_random(MODELS[name])


def test_blocks_that_do_not_divide_the_map_are_refused():
    with pytest.raises(UserError, match=r"^space_to_depth with block 2 of a 5x4 map: H and W must be multiples of it$"):
        SpaceToDepth(2).output_shape([(5, 4, 3)])
    with pytest.raises(UserError, match=r"^depth_to_space with block 2 of 6 channels: C must be a multiple of 4$"):
        DepthToSpace(2).output_shape([(5, 4, 6)])
