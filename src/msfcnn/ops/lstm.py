"""UNIDIRECTIONAL_SEQUENCE_LSTM (Keras' LSTM as TensorFlow's converter fuses it): a (T, F)
sequence in, the hidden state of every step (T, U) out, or of the last step only (U,) when the
converter's STRIDED_SLICE of the last step is folded into the op (`return_sequences` False).

Each step computes four gates, input i, forget f, cell g and output o (TFLite's order), from the
step's input x and the previous hidden state h: gate = act(W_x x + b + W_h h), act sigmoid (tanh
for g); then c = f * c + i * g (clipped to +-cell_clip when set) and h = o * tanh(c). TFLite keeps
the states in variable tensors, zero (h at its zero point) until the first invocation and then
kept from one invocation to the next. A `stateful` LSTM does the same: its states are two of the
graph's state buffers (Graph.states: "hidden_state", "cell_state"), in the arena's persistent
region. Any other LSTM starts every run from zero states, its states in its workspace.

int8 (TFLite Micro's integer LSTM, TFLite's 8x8_16 kernel): int8 activations and weights (one
scale per weight tensor), int32 biases, gate pre-activations in int16 Q3.12 (each matmul rescaled
to 2^-12 with its own multiplier, the two results added with saturation), gate outputs Q0.15, an
int16 cell state of scale 2^cell_log2 and the hidden state requantised to int8. The runtimes round
four steps differently (lstm_fixed.py has their gate functions):

- gate functions: LiteRT gemmlowp's fixed-point logistic / tanh, TFLite Micro TFLite's reference
  int16 LOGISTIC / TANH (an interpolated table);
- products: LiteRT shifts f * c right by 15 and i * g by 30 + cell_log2 with one rounding; TFLite
  Micro multiplies by the quantised multiplier of the same power of two (two roundings, clamped);
- the recurrent matmul: LiteRT adds it to the clamped input matmul before clamping again, TFLite
  Micro clamps each. The hidden state's multiplier: LiteRT rounds 2^-30 / hidden scale to float32;
- the matmuls' multipliers: LiteRT multiplies the activation and weight scales in float32, TFLite
  Micro in double (a gate pre-activation near a rounding tie then rounds apart).

float32: the same steps in float32, each matmul a running sum in C order (bias first), with the C
library's expf and tanhf; the C kernel takes float_math.h's exp and tanh (within 3 ulp), and the
runtimes' own float kernels sum in other orders: float32 outputs agree within rounding, not bit
for bit.

The per-step functions (`step_int8`, `step_float`; C: `msf_lstm_step_s8` / `_f32`) carry the
state in and out, so a time-scan loop can run the cell one step at a time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from ..errors import UserError
from . import lstm_fixed as fx
from .base import CCall, KernelContext, Op, Pattern, Shape, c_struct, in_numerics
from .logistic import libm_f32
from .loop_counts import Counts
from .soft_float import logistic_reduced, nonzero_excess, tanh_reduced

GATES = ("input", "forget", "cell", "output")  # TFLite's order of the four gates' tensors
GATE_LOG2 = -12  # gate pre-activations are Q3.12 (scale 2^-12), gate outputs Q0.15


class GatedProducts:
    """What the latency model asks of a recurrent layer's products (features._count_signed_macs):
    each step multiplies `gates` rows of `units` by the input and by h."""

    gates = 1  # matmul rows per unit and step, for each of the input and the hidden state
    rectified_state = False  # h holds no negative value (a ReLU made it): about half of it 0
    units: int

    def input_macs(self, in_shape: Shape) -> int:
        """The MACs of the gates' rows on the input (the others read h)."""
        steps, features = sequence_shape(in_shape)
        return steps * self.gates * self.units * features

    def zero_state_macs(self, in_shape: Shape) -> int:
        """The MACs of the first step's recurrent rows, which read h = 0. A stateful layer's states
        are 0 after a reset: its invocation is counted as the first one after it."""
        return self.gates * self.units * self.units if sequence_shape(in_shape)[0] else 0


@dataclass(frozen=True)
class Lstm(GatedProducts, Op, pattern=Pattern.OPAQUE, c_call=CCall.SEQUENCE, recurrent=True, elements=frozenset({"int8", "float32"})):
    kind = "lstm"
    c_kernel = "msf_lstm"
    gates = 4  # (its h = o * tanh(c) takes both signs: not rectified_state)
    units: int
    return_sequences: bool = True
    cell_clip: float = 0.0
    cell_log2: int = 0  # int8: the cell state's scale is 2^cell_log2
    hidden_scale: float = 1.0  # int8: the hidden (output) state's quantisation
    hidden_zero: int = 0
    litert_hidden_scale: float = 1.0  # int8: LiteRT's requantisation of h (its intermediate 4)
    litert_hidden_zero: int = 0
    stateful: bool = False  # the states outlive the invocation (Graph.states), not the workspace

    @property
    def c_kernel(self) -> str:  # type: ignore[override]
        """A stateful LSTM runs its own entry (kernels/lstm.c), which takes the state pointers beside
        the plain params: the plain kernels stay as they were calibrated."""
        return "msf_lstm_stateful" if self.stateful else "msf_lstm"

    # ---- the contract ----------------------------------------------------------------------
    def output_shape(self, inputs: list[Shape]) -> Shape:
        steps, _ = sequence_shape(inputs[0])
        return (steps, self.units) if self.return_sequences else (self.units,)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        steps, features = sequence_shape(inputs[0])
        return steps * 4 * self.units * (features + self.units)

    def describe(self) -> str:
        return f"lstm {self.units}" + ("" if self.return_sequences else " (last step)") \
            + (", state kept" if self.stateful else "")

    def workspace_bytes(self, element: str) -> int:
        """The bytes one run needs besides its input and output: the states and one step's four
        gates (workspace_views); a stateful LSTM's states are not in it (Graph.states)."""
        if self.stateful:
            return 4 * 4 * self.units if element == "float32" else 8 * self.units + 1
        if element == "float32":
            return 4 * 6 * self.units
        return 11 * self.units + 1

    def workspace_views(self, workspace: np.ndarray, element: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(h, c, gates) in the workspace's bytes, as the C kernel lays them out. float32: h, c and
        the gates in a row (a float arena places buffers at multiples of 4). int8: c and the gates
        (int16) from the first even address, h (int8) in the last `units` bytes. A stateful LSTM's
        workspace holds the gates alone (h and c are None)."""
        n = self.units
        if self.stateful:
            pad = 0 if element == "float32" else workspace.ctypes.data & 1
            return None, None, workspace[pad:pad + 4 * n * (4 if element == "float32" else 2)].view(
                np.float32 if element == "float32" else np.int16)
        if element == "float32":
            values = workspace.view(np.float32)
            return values[:n], values[n:2 * n], values[2 * n:]
        pad = workspace.ctypes.data & 1
        wide = workspace[pad:pad + 10 * n].view(np.int16)
        return workspace[10 * n + 1:].view(np.int8), wide[:n], wide[n:]

    # ---- one step at a time, in a time scan (schedule/schemes/timescan.py) --------------------
    def cell_bytes(self, element: str) -> tuple[int, int]:
        """(bytes of the state a time scan keeps between steps: h and c; bytes of one step's
        temporaries: the four gates), as kernels/lstm_cell.c lays them out (cell_views)."""
        if element == "float32":
            return 8 * self.units, 16 * self.units
        return 3 * self.units + 1, 8 * self.units + 1

    def cell_views(self, state: np.ndarray, temp: np.ndarray, element: str):
        """(h, c, gates) in the state's and the temporaries' bytes. float32: h then c. int8: c
        (int16) from the state's first even address, h in its last `units` bytes; the gates from
        the temporaries' first even address."""
        n = self.units
        if element == "float32":
            values = state.view(np.float32)
            return values[:n], values[n:], temp.view(np.float32)[:4 * n]
        pad, gates_pad = state.ctypes.data & 1, temp.ctypes.data & 1
        return (state[2 * n + 1:].view(np.int8), state[pad:pad + 2 * n].view(np.int16),
                temp[gates_pad:gates_pad + 8 * n].view(np.int16))

    def cell_start(self, views, ctx: KernelContext) -> None:
        """The state before the first step (initial_state)."""
        h, c, _ = views
        h[...], c[...] = self.initial_state(ctx)

    def cell_step(self, x: np.ndarray, views, ctx: KernelContext) -> np.ndarray:
        """One step from the state in `views` (cell_views), which it updates: returns h."""
        h, c, gates = views
        state = (h.astype(np.float32 if ctx.is_float else np.int64), c.astype(c.dtype))
        step = self.step_float if ctx.is_float else self.step_int8
        h[...], c[...], gates[...] = step(x, state, ctx)
        return h

    # ---- numpy kernel ------------------------------------------------------------------------
    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        size = self.workspace_bytes("float32" if ctx.is_float else "int8")
        return self.run_whole(inputs, ctx, np.zeros(size + 4, np.uint8)[:size])

    def run_whole(self, inputs: list[np.ndarray], ctx: KernelContext, workspace: np.ndarray | None) -> np.ndarray:
        """The whole sequence from zero states, the states and gates of each step kept in the
        `workspace` bytes (the arena's, in the fused executor) as the C kernel keeps them. A
        stateful LSTM starts from its state buffers (ctx.states: h, c) and leaves its last states
        there."""
        if workspace is None:
            return self.reference(inputs, ctx)
        steps, features = sequence_shape(inputs[0].shape)
        xs = inputs[0].reshape(steps, features)
        h_view, c_view, gates_view = self.workspace_views(workspace, "float32" if ctx.is_float else "int8")
        if self.stateful:
            if len(ctx.states) != 2:
                raise AssertionError("a stateful LSTM runs with its two state buffers (KernelContext.states)")
            h_view, c_view = ctx.states
        else:
            h_view[...], c_view[...] = self.initial_state(ctx)
        step = self.step_float if ctx.is_float else self.step_int8
        rows = []
        for t in range(steps):
            state = (h_view.astype(np.float32 if ctx.is_float else np.int64), c_view.astype(c_view.dtype))
            h_view[...], c_view[...], gates_view[...] = step(xs[t], state, ctx)
            rows.append(h_view.copy())
        out = np.stack(rows) if self.return_sequences else rows[-1]
        return out.astype(np.float32 if ctx.is_float else np.int8)

    def initial_state(self, ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
        """(h, c) before the first step: zeros (h at its zero point)."""
        return self.state_buffers(ctx.is_float)

    def state_buffers(self, is_float: bool) -> tuple[np.ndarray, np.ndarray]:
        """The states' initial values in their element types (float32; int8 h, int16 c): zeros, h at
        its zero point, as both runtimes reset variable tensors."""
        if is_float:
            return np.zeros(self.units, np.float32), np.zeros(self.units, np.float32)
        return np.full(self.units, self.hidden_zero, np.int8), np.zeros(self.units, np.int16)

    def step_int8(self, x: np.ndarray, state, ctx: KernelContext):
        """One step of the integer LSTM: (h, c) -> (h', c', the four gates' outputs)."""
        h, c = state
        tflm = ctx.numerics == nx.TFLM
        p = self.int8_params(ctx)
        pre = []
        for g in range(4):
            a = fx.clamp16(nx.multiply_by_quantized_multiplier(
                nx.exact_int_matmul(p["wx"][g], x.astype(np.float64)) + p["bias_x"][g], *p["mx"][g]))
            b = nx.multiply_by_quantized_multiplier(
                nx.exact_int_matmul(p["wh"][g], h.astype(np.float64)) + p["bias_h"][g], *p["mh"][g])
            pre.append(fx.clamp16(a + (fx.clamp16(b) if tflm else b)))
        if tflm:
            i, f, o = (fx.tflm_logistic16(pre[k]) for k in (0, 1, 3))
            g = fx.tflm_tanh16(pre[2], *fx.tflm_tanh_params(GATE_LOG2))
            c = fx.clamp16(_mul_clamp16(f, c, 1 << 30, -14) + _mul_clamp16(i, g, *p["m_ig"]))
        else:
            i, f, o = (fx.gemmlowp_logistic16(pre[k]) for k in (0, 1, 3))
            g = fx.gemmlowp_tanh16(pre[2], 3)
            c = fx.clamp16(fx.wrap16(nx.rounding_divide_by_pot(f * c, 15))
                           + fx.wrap16(nx.rounding_divide_by_pot(i * g, 30 + self.cell_log2)))
        if p["clip"] > 0:
            c = np.clip(c, -p["clip"], p["clip"])
        if tflm:
            t = fx.tflm_tanh16(c, *fx.tflm_tanh_params(self.cell_log2))
        else:
            t = fx.gemmlowp_tanh16(c, 15 + self.cell_log2)
        h = np.clip(nx.multiply_by_quantized_multiplier(o * t, *p["m_h"]) + p["h_zero"], nx.INT8_MIN, nx.INT8_MAX)
        return h, c, np.concatenate([i, f, g, o])

    def step_float(self, x: np.ndarray, state, ctx: KernelContext):
        """One float32 step: (h, c) -> (h', c', the gates), in the C kernel's order of operations."""
        h, c = state
        pre = self.gate_sums(x, h, ctx)
        i, f, o = (_sigmoid(pre[k]) for k in (0, 1, 3))
        g = _tanh(pre[2])
        c = (f * c + i * g).astype(np.float32)
        if self.cell_clip > 0:
            c = np.clip(c, np.float32(-self.cell_clip), np.float32(self.cell_clip))
        return (o * _tanh(c)).astype(np.float32), c, np.concatenate([i, f, g, o])

    def gate_sums(self, x: np.ndarray, h: np.ndarray, ctx: KernelContext) -> list[np.ndarray]:
        """The four gates' float32 sums (their functions' arguments), in the C kernel's order."""
        w = ctx.consts
        return [nx.float32_dot_in_c_order(nx.float32_dot_in_c_order(w["bias"][g], w["input_weights"][g], x),
                                          w["recurrent_weights"][g], h) for g in range(4)]

    def value_counts(self, inputs: list[np.ndarray], output: np.ndarray, ctx: KernelContext) -> dict[str, float]:
        """The float32 LSTM's exps that take their reduction (soft_float.py): the logistics of
        the input, forget and output gates, the tanhs of the cell gate and of c; and its input's
        products that read a value other than 0 beyond half (used where a ReLU made the input).
        From zero states (a stateful LSTM as the first invocation after a reset)."""
        if not ctx.is_float:
            return {}
        steps, features = sequence_shape(inputs[0].shape)
        xs = inputs[0].reshape(steps, features).astype(np.float32)
        state = self.state_buffers(True)
        exps = expm1s = 0
        for x in xs:
            pre = self.gate_sums(x, state[0], ctx)
            exps += sum(logistic_reduced(pre[k]) for k in (0, 1, 3))
            state = self.step_float(x, state, ctx)[:2]
            expm1s += tanh_reduced(pre[2]) + tanh_reduced(state[1])
        return {"exp_reduced": exps, "expm1_reduced": expm1s,
                "input_nonzero_excess": nonzero_excess(xs, 4 * self.units)}

    def int8_params(self, ctx: KernelContext) -> dict:
        """Every multiplier, effective bias and clamp of the integer kernel, as the runtime whose
        numerics the graph follows prepares them (shared by the numpy and the C kernels)."""
        w, in_q = ctx.consts, ctx.input_quant[0]
        tflm = ctx.numerics == nx.TFLM
        wx = w["input_weights"].astype(np.int64)
        wh = w["recurrent_weights"].astype(np.int64)
        gate_scale = 2.0 ** GATE_LOG2

        def mult(activation_scale: float, weight_scale: float) -> tuple[int, int]:
            """A gate matmul's rescale to Q3.12. LiteRT multiplies the two float32 scales in float32;
            TFLite Micro widens each to double first (GetQuantizedConvolutionMultipler in the
            tflite-micro build's machine code), which moves the multiplier's last bits."""
            a, b = np.float32(activation_scale), np.float32(weight_scale)
            product = float(a) * float(b) if tflm else float(a * b)
            return nx.quantize_multiplier(product / gate_scale)

        cell_scale = 2.0 ** self.cell_log2
        if tflm:  # (2^-15 * 2^-15) / scale in double
            m_h = nx.quantize_multiplier(2.0 ** -30 / float(np.float32(self.hidden_scale)))
            m_ig = nx.quantize_multiplier(2.0 ** -30 / cell_scale)
            h_zero = self.hidden_zero
            clip = int(min(max(float(np.float32(self.cell_clip)) / cell_scale, -32768.0), 32767.0))
        else:  # 2^-15 / scale * 2^-15 in double, stored as a float32
            m_h = nx.quantize_multiplier(float(np.float32(2.0 ** -15 / float(np.float32(self.litert_hidden_scale))
                                                          * 2.0 ** -15)))
            m_ig = (0, 0)
            h_zero = self.litert_hidden_zero
            clip = int(np.float32(min(max(np.float32(self.cell_clip) / np.float32(cell_scale), -32768.0), 32767.0)))
        return {
            "wx": wx, "wh": wh,
            "bias_x": w["bias"].astype(np.int64) - in_q.zero_point * wx.sum(axis=2),
            "bias_h": -self.hidden_zero * wh.sum(axis=2),
            "mx": [mult(in_q.scale, s) for s in w["input_scales"]],
            "mh": [mult(self.hidden_scale, s) for s in w["recurrent_scales"]],
            "m_h": m_h, "m_ig": m_ig, "h_zero": h_zero, "clip": max(clip, 0),
        }

    # ---- C kernel ----------------------------------------------------------------------------
    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        w = ctx.consts
        if ctx.is_float:
            return {role: np.ascontiguousarray(w[role], np.float32)
                    for role in ("input_weights", "recurrent_weights", "bias")}
        p = self.int8_params(ctx)
        table = {"sigmoid_table": fx.sigmoid_table().astype(np.int32)} if ctx.numerics == nx.TFLM else {}
        return {
            **table,
            "input_weights": np.ascontiguousarray(w["input_weights"], np.int8),
            "recurrent_weights": np.ascontiguousarray(w["recurrent_weights"], np.int8),
            "bias_x": p["bias_x"].astype(np.int32), "bias_h": p["bias_h"].astype(np.int32),
            "mult": np.array([m for m, _ in p["mx"]] + [m for m, _ in p["mh"]], np.int32),
            "shift": np.array([s for _, s in p["mx"]] + [s for _, s in p["mh"]], np.int32),
        }

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        plain = self.plain_c_params(ctx, in_shapes, names)
        if not self.stateful:
            return plain
        return f"{{ .op = {plain}, .hidden = {names['hidden_state']}, .cell = {names['cell_state']} }}"

    def plain_c_params(self, ctx, in_shapes, names) -> str:
        steps, features = sequence_shape(in_shapes[0])
        fields = {"steps": steps, "features": features, "units": self.units,
                  "return_sequences": int(self.return_sequences)}
        if ctx.is_float:
            fields.update(cell_clip=float(self.cell_clip), weights_f32=names["input_weights"],
                          recurrent_f32=names["recurrent_weights"], bias_f32=names["bias"])
            return c_struct(fields)
        p = self.int8_params(ctx)
        fields.update(
            tflm=int(ctx.numerics == nx.TFLM), cell_log2=self.cell_log2, cell_clip_q=p["clip"],
            hidden_zero=self.hidden_zero, h_zero=p["h_zero"], h_mult=p["m_h"][0], h_shift=p["m_h"][1],
            ig_mult=p["m_ig"][0], ig_shift=p["m_ig"][1], weights=names["input_weights"],
            recurrent=names["recurrent_weights"], bias_x=names["bias_x"], bias_h=names["bias_h"],
            mult=names["mult"], shift=names["shift"], sigmoid_table=names.get("sigmoid_table"))
        return c_struct(fields)

    # ---- the latency model's counts ----------------------------------------------------------
    def count_sequence(self, family: str, in_shape: Shape, output: Shape, counts: Counts) -> None:
        """Per step: the four gates' rows (4 x units: each a rescale, or a float sum, and a gate
        function; their MACs are the op's) and the units' cell updates (two products, a tanh and
        the hidden state's rescale)."""
        steps, _ = sequence_shape(in_shape)
        counts[f"{family}:step"] += steps
        counts[f"{family}:gate_row"] += steps * 4 * self.units
        counts[f"{family}:cell"] += steps * self.units
        if family == "lstm_f32":  # run whole, h is copied to the output (every step's, or the last)
            copies = steps if self.return_sequences else 1
            counts[f"{family}:output_copy"] += copies
            counts[f"{family}:output_copy_byte"] += copies * self.units * 4

    def for_numerics(self, ctx: KernelContext, shape: Shape) -> "Lstm":
        return in_numerics(Lstm, self, ctx, shape)


def _mul_clamp16(a: np.ndarray, b: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """TFLite Micro's int16 x int16 -> int16 MUL: one quantised multiplier, clamped."""
    return fx.clamp16(nx.multiply_by_quantized_multiplier(a * b, multiplier, shift))


def sequence_shape(shape: Shape) -> tuple[int, int]:
    """(steps, features) of a sequence: (T, F), or (1, T, F) as a one-row feature map."""
    if len(shape) == 2 or (len(shape) == 3 and shape[0] == 1):
        return int(shape[-2]), int(shape[-1])
    raise UserError(f"lstm needs a (steps, features) sequence, got shape {list(shape)}")


def _sigmoid(x: np.ndarray) -> np.ndarray:
    one = np.float32(1)
    return np.array([one / (one + libm_f32("expf", -v, np.exp)) for v in x.astype(np.float32)], np.float32)


def _tanh(x: np.ndarray) -> np.ndarray:
    return np.array([libm_f32("tanhf", v, np.tanh) for v in x.astype(np.float32)], np.float32)
