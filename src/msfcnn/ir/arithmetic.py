"""The integer arithmetic of an imported graph, checked before anything runs it: every rescale
factor must be one TFLite's fixed-point multipliers can hold (numerics.quantize_multiplier), and
no accumulator may overflow. A layer that fails either is refused in one line naming it, so that
the numpy kernels (exact, in int64) and the generated C (int32 accumulators, 64-bit output stage)
never disagree and the C has no signed overflow, which C leaves undefined."""

from __future__ import annotations

import numpy as np

from ..errors import UserError
from .graph import Graph

# The accumulator of int8 kernels is an int32, that of 16x8 kernels an int64 that TFLite's output
# stage multiplies by a 16-bit multiplier (MultiplyByQuantizedMultiplier(int64_t x, ...)).
ACCUMULATOR_LIMITS = {"int8": (1 << 31) - 1, "uint8": (1 << 31) - 1, "int16": (1 << 47) - 1}
ACCUMULATOR_TYPES = {"int8": "int32", "uint8": "int32", "int16": "48-bit"}
# Pooling and means sum raw values in an int32, whatever the element type.
SUM_LIMIT = (1 << 31) - 1
# The int8 output stage multiplies the accumulator by a 64-bit multiplier (the significand with
# the left shift folded in, ops/conv2d.output_stage_consts) and adds a rounding of up to 2^30.
OUTPUT_STAGE_LIMIT = (1 << 63) - (1 << 30)


def check_arithmetic(graph: Graph) -> None:
    """UserError naming the first layer whose fixed-point constants cannot be formed or whose
    accumulator (or the output stage's product of it) can overflow."""
    with np.errstate(all="ignore"):  # a scale ratio overflowing float32 is refused below, not warned about
        for index, node in enumerate(graph.nodes):
            _check_layer(graph, index, node)


def _check_layer(graph: Graph, index: int, node) -> None:
    """UserError if layer `index` fails (see check_arithmetic)."""
    if node.op.c_kernel is None or graph.kernel_element(index).name == "float32":
        return
    ctx = graph.kernel_context(index)
    where = f"layer {index} ({node.op.describe()})"
    try:  # the C params: every constant of the kernel, formed as the code generator forms it
        consts = node.op.c_consts(ctx)
        names = {role: role for role in consts} | {graph.states[i].name: graph.states[i].name
                                                   for i in graph.states_of(index)}  # (an SVDF's state)
        node.op.c_params(ctx, graph.input_shapes(index), node.shape, names)
    except UserError as err:
        raise UserError(f"{where}: {err}") from None
    _check_sum(graph, index, ctx, where)
    bound = node.op.accumulator_bound(ctx)
    if bound is None:
        return
    element = graph.kernel_element(index).name
    if bound > ACCUMULATOR_LIMITS[element]:
        raise UserError(f"{where}: its {ACCUMULATOR_TYPES[element]} accumulator can reach {bound} (biases up to "
                        f"{_largest(ctx.consts.get('bias'))}), beyond its range: the model's weights and biases "
                        "would overflow it")
    multiplier = _largest(consts.get("multiplier"))
    if bound * multiplier > OUTPUT_STAGE_LIMIT:
        raise UserError(f"{where}: its accumulator (up to {bound}) times its output multiplier ({multiplier}) "
                        "overflows the 64-bit output stage: the model's scales make the rescale too large")


def _check_sum(graph: Graph, index: int, ctx, where: str) -> None:
    """UserError if the int32 sum of a pooling or mean kernel can overflow: it adds raw stored
    values (then subtracts the zero point times the count, as TFLite's reference MEAN does)."""
    count = graph.nodes[index].op.summed_values(graph.input_shapes(index))
    if count is None:
        return
    low, high = (-32768, 32767) if graph.kernel_element(index).name == "int16" else (-128, 127)
    zero_point = ctx.input_quant[0].zero_point if ctx.input_quant and ctx.input_quant[0] is not None else 0
    largest = count * max(-low, high - zero_point, zero_point - low)
    if largest > SUM_LIMIT:
        raise UserError(f"{where}: its int32 sum of {count} values can reach {largest}, beyond its range: "
                        "the window or map is too large for integer pooling")


def _largest(values) -> int:
    return 0 if values is None else int(np.max(np.abs(np.asarray(values, dtype=object)), initial=0))
