"""The numpy reference executor: runs a graph op by op, unfused, every tensor in full.

This is the executable spec of msfcnn's numerics (docs/numerics.md): int8 graphs follow TFLite's
integer kernels bit for bit (each op's `reference` in `ops/`), float32 graphs compute in float32.
Fused plans and generated C are checked against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Union

import numpy as np

from . import numerics as nx
from .errors import UserError
from .ir import Graph, input_tensor

# One input array, or a sequence of them (one per input, in the model's order) for a model with several.
Inputs = Union[np.ndarray, Sequence[np.ndarray]]
# The values of a graph's state buffers (Graph.states), in its order: what one invocation leaves for
# the next, as the interpreters keep a model's variable tensors between invoke() calls.
States = list[np.ndarray]


def initial_states(graph: Graph) -> States:
    """Fresh copies of the state buffers' initial values (a new or reset model's)."""
    return [state.initial.copy() for state in graph.states]


def with_states(graph: Graph, index: int, states: States):
    """Node `index`'s kernel context, with its state buffers (arrays its kernel updates in place)."""
    ctx = graph.kernel_context(index)
    owned = graph.states_of(index)
    return replace(ctx, states=tuple(states[i] for i in owned)) if owned else ctx


def run_unfused(graph: Graph, x: np.ndarray) -> np.ndarray:
    """Run `graph` on one input given in the model's own layout, batch dimension optional.

    Returns the output in the same layout, with a batch dimension if the input had one: int8 for
    int8 graphs, float32 for float graphs. An int8 graph with float32 edges (a TFLite model with
    QUANTIZE / DEQUANTIZE around its int8 body: `graph.float_input` / `float_output`) takes float32
    (or already quantised int8) and returns float32, converted as the interpreter converts them.
    A model with several outputs returns its first (`run_unfused_outputs` returns them all).
    """
    return run_unfused_outputs(graph, x)[0]


def run_unfused_outputs(graph: Graph, x: Inputs, states: States | None = None) -> list[np.ndarray]:
    """Every output of `graph` on one input, in the model's order (`run_unfused`'s form each). A
    model with several inputs takes a sequence of arrays, one per input in the model's order.
    A stateful model (Graph.states) starts from `states` and leaves its new state there; without
    them, from its initial state (a first invocation)."""
    states = initial_states(graph) if states is None else states
    xs, batched = internal_inputs(graph, x)
    values = run_ops(graph, xs, states)
    return [to_model_layout(graph, values[t], batched) for t in graph.output_tensors]


def run_ops(graph: Graph, xs: list[np.ndarray], states: States, visit=None) -> dict[int, np.ndarray]:
    """The graph's reference kernels run op by op on its internal inputs `xs`; `visit(index,
    inputs, output, ctx)`, if given, sees each op's run. Returns the values still read at the end
    (the outputs'): a tensor is dropped once nobody reads it any more."""
    values = {input_tensor(k): value for k, value in enumerate(xs)}
    last_use = graph.last_use()
    for index, node in enumerate(graph.nodes):
        inputs, ctx = [values[t] for t in node.inputs], with_states(graph, index, states)
        out = node.op.reference(inputs, ctx)
        if out.shape != node.shape:
            raise AssertionError(f"layer {index} ({node.op.kind}) produced {out.shape}, expected {node.shape}")
        if visit is not None:
            visit(index, inputs, out, ctx)
        values[index] = out
        for t in set(node.inputs):  # drop tensors nobody reads any more (an add may read one twice)
            if last_use[t] == index:
                del values[t]
    return values


def run_sequence(graph: Graph, steps: Sequence[Inputs]) -> list[list[np.ndarray]]:
    """Every output of each step of a sequence, run in order from the initial state, each step
    starting from the state the one before left (a stateless model: each step alone)."""
    states = initial_states(graph)
    return [run_unfused_outputs(graph, x, states) for x in steps]


def internal_inputs(graph: Graph, x: Inputs) -> tuple[list[np.ndarray], bool]:
    """The caller's inputs (one array, or one per input of a model with several), each checked and
    brought to the graph's (H, W, C) and element type; and whether they had a batch dimension."""
    n = len(graph.input_tensors)
    if n > 1 and isinstance(x, np.ndarray):
        raise UserError(f"{graph.name} takes {n} inputs (a sequence of arrays), got one array")
    xs = [np.asarray(x)] if n == 1 else [np.asarray(a) for a in x]
    if len(xs) != n:
        raise UserError(f"{graph.name} takes {n} input{'s' if n > 1 else ''}, got {len(xs)}")
    batched = xs[0].ndim == len(graph.input_shape) + 1
    internal = []
    for k, value in enumerate(xs):
        if value.ndim == len(graph.input_spec(k).shape) + 1:
            if value.shape[0] != 1:
                raise UserError(f"run_unfused takes one input at a time, got a batch of {value.shape[0]}")
            value = value[0]
        internal.append(to_internal(graph, value, k))
    return internal, batched


def to_model_layout(graph: Graph, y: np.ndarray, batched: bool) -> np.ndarray:
    """An output tensor as the caller gets it: dequantised at a float-edged model's output, uint8
    at a uint8 one, in the model's layout, with a batch dimension if the input had one."""
    if graph.float_output:
        y = nx.dequantize(y, graph.output_quant, graph.numerics)
    elif graph.uint8_output:
        y = from_int8(y)
    if graph.layout == "NCHW" and y.ndim == 3:
        y = y.transpose(2, 0, 1)
    return y[None] if batched else y


def to_int8(x: np.ndarray) -> np.ndarray:
    """uint8 values as the int8 values holding the same reals (q - 128, zero point - 128)."""
    return (np.asarray(x, np.uint8) ^ np.uint8(0x80)).view(np.int8)


def from_int8(y: np.ndarray) -> np.ndarray:
    """The inverse of to_int8."""
    return (np.asarray(y, np.int8).view(np.uint8) ^ np.uint8(0x80))


def to_internal(graph: Graph, x: np.ndarray, k: int = 0) -> np.ndarray:
    """Check input k's shape and type; bring it to the graph's (H, W, C) and element type."""
    spec = graph.input_spec(k)
    if graph.float_input and np.issubdtype(x.dtype, np.floating):
        # Before any transposition: the interpreter's rounding depends on the memory order.
        x = nx.quantize_float(x, spec.quant, graph.numerics, graph.element.numpy)
    if graph.uint8_input and x.dtype == np.uint8:
        x = to_int8(x)
    if graph.layout == "NCHW" and x.ndim == 3:
        x = x.transpose(1, 2, 0)
    if tuple(x.shape) != tuple(spec.shape):
        which = f"input {k} shape" if k else "input shape"
        raise UserError(f"{which} {list(x.shape)} does not match the model's {list(spec.shape)} ({graph.layout})")
    if graph.dtype == "float32":
        return x.astype(np.float32)
    if x.dtype != graph.element.numpy:
        kind = "uint8" if graph.uint8_input else graph.dtype
        raise UserError(f"an {kind} model takes an {kind} input, got {x.dtype}")
    missing = [i for i, node in enumerate(graph.nodes) if node.quant is None and not graph.element_of(i).is_float]
    if missing:
        raise UserError(f"layer {missing[0]} ({graph.nodes[missing[0]].op.kind}) of an {graph.dtype} model has no "
                        "output quantisation")
    return x

