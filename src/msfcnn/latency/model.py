"""The latency model: predicted instructions of a block, or of a whole plan, on one target.

A target's coefficients (`coefficients/<target>.json`, written by `scripts/calibrate_latency.py`)
give the instructions of one pass of each loop that `latency.features` counts; a prediction is the
sum of counts times coefficients. The file also records a digest of each kernel source it was
calibrated against: when one of those changes, the model says so (`stale`) and the calibration
check in the tests fails until it is re-run. Kernels added later, or whose families the
calibration never ran, are not in the record: they are reported as uncovered instead.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources

from ..codegen.moves import count_move, overlap
from ..errors import UserError, did_you_mean
from ..ir import Graph
from ..schedule import LoweredBlock, Schedule
from .features import BlockCounter, Features
from .values import soft_float, value_profile

FORMAT = 1


@dataclass(frozen=True)
class LatencyModel:
    target: str
    dsp: bool  # the target compiles the kernels' Arm DSP-extension loops
    coefficients: dict[str, float]
    # file name -> digest of the kernel sources the coefficients were fitted on (see kernel_digests)
    kernel_digests: dict[str, str] = field(default_factory=dict)
    calibration: dict = field(default_factory=dict, compare=False)  # how the fit went (stats)
    mve: bool = False  # the target also compiles the int8 kernels' Helium loops (cortex-m55)
    # The last graphs' counters (graph, PlanCounter): `fit` plans a model with its io counted and
    # not, and both planners weigh mostly the same blocks, whose calls the counter caches. Not an
    # init field, so a model made by dataclasses.replace (other coefficients) starts without them.
    _counters: list = field(default_factory=list, init=False, repr=False, compare=False)

    def predict(self, features: Features) -> float:
        c = self.coefficients
        return sum(c.get(name, 0.0) * count for name, count in features.items())

    def unknown(self, features: Features) -> list[str]:
        """Counted loops the calibration never saw (their cost is predicted as 0)."""
        return sorted(name for name, count in features.items() if count and name not in self.coefficients)

    def has_costs(self, family: str) -> bool:
        """The calibration fitted the kernel family: a cost per call, and not every one of its
        coefficients 0 (a fit without its samples leaves zeros; no kernel runs in 0 instructions)."""
        costs = [v for k, v in self.coefficients.items() if k.split(":", 1)[0] == family]
        return f"{family}:call" in self.coefficients and any(costs)

    def uncovered(self, graph: Graph) -> list[str]:
        """The graph's kernels without costs (`has_costs`): their time cannot be predicted (they
        would count as 0), so no prediction is given for the graph."""
        counter = BlockCounter(graph, self.dsp, mve=self.mve)
        families = {counter.op(t).family for t in range(len(graph)) if graph.nodes[t].op.c_kernel is not None}
        return sorted(f for f in families if not self.has_costs(f))

    @property
    def stale_sources(self) -> list[str]:
        """The calibrated kernel sources that have changed (or gone) since the calibration."""
        now = kernel_digests()
        return sorted(name for name, digest in self.kernel_digests.items() if now.get(name) != digest)

    @property
    def stale(self) -> bool:
        return bool(self.stale_sources)

    def counter(self, graph: Graph, x=None) -> "PlanCounter":
        """The graph's counter, shared by every caller on the same graph object (a graph is not
        changed once loaded). On a core without an FPU a float graph's counts are for the values
        of input `x` (values.py; by default the seeded input random_input(graph, 0)): a counter of
        its own, not shared."""
        if x is not None and self.soft_float:
            return PlanCounter(self, BlockCounter(graph, self.dsp, self.predict, self.mve, self.values_of(graph, x)))
        for kept_graph, kept in self._counters:
            if kept_graph is graph:
                return kept
        made = PlanCounter(self, BlockCounter(graph, self.dsp, self.predict, self.mve, self.values_of(graph)))
        self._counters[:] = [(graph, made), *self._counters[:1]]
        return made

    @property
    def soft_float(self) -> bool:
        """The target's core has no FPU: its float kernels' time depends on their values."""
        return soft_float(self.target)

    def values_of(self, graph: Graph, x=0):
        """The graph's value profile on input x (a seed of random_input, or an input) where the
        core has no FPU (values.py); None elsewhere."""
        return value_profile(graph, x) if self.soft_float else None

    def to_dict(self) -> dict:
        return {"format": FORMAT, "target": self.target, "dsp": self.dsp, **({"mve": True} if self.mve else {}),
                "kernel_digests": dict(sorted(self.kernel_digests.items())),
                "calibration": self.calibration, "coefficients": dict(sorted(self.coefficients.items()))}

    @staticmethod
    def from_dict(doc: dict) -> "LatencyModel":
        return LatencyModel(doc["target"], bool(doc["dsp"]), {k: float(v) for k, v in doc["coefficients"].items()},
                            dict(doc.get("kernel_digests", {})), doc.get("calibration", {}), bool(doc.get("mve", False)))


@dataclass
class PlanCounter:
    """Predictions for one graph's blocks (features cached across the blocks of the graph)."""

    model: LatencyModel
    blocks: BlockCounter

    def block(self, lowered: LoweredBlock) -> float:
        return self.blocks.block(lowered)

    def schedule(self, schedule: Schedule) -> list[float]:
        """Per block of the schedule, as `verify --instructions` splits the measured count."""
        return schedule_features(schedule, self.blocks)


def schedule_features(schedule: Schedule, counter: BlockCounter) -> list[Features]:
    """Each block's counts plus what msfcnn_invoke does around it (codegen/icount.py splits the
    measured count the same way): the entry with block 0 and the moves after each block with it
    (codegen/moves.py: inline or a library call)."""
    around = [Features() for _ in schedule.blocks]
    for index, moves in enumerate(schedule.moves):
        for source, target, size in moves:
            count_move(around[index], size, not overlap(source, target, size))
    if around:
        around[0]["invoke:call"] += 1
        # An arena input or output (--count-io) is copied only when the caller passes a buffer of
        # its own: the harnesses, as model.h asks, pass the arena's (invoke_buffer), so no bytes.
    return [counter.block(block) + counter.weigh(extra) for block, extra in zip(schedule.blocks, around)]


# The kernel sources that hold only the named families' code: a calibration that never ran any of
# those families does not vouch for the file, so changing it does not make the model stale. Every
# other source (shared helpers, the block templates) is vouched for by every calibration.
KERNEL_SOURCE_FAMILIES = {
    "activation.c": ("activation",), "add.c": ("add",), "axis_mean.c": ("axis_mean",), "concat.c": ("concat",),
    "const_operand.c": ("mul", "mul_const", "mul_broadcast", "add_const"), "conv2d.c": ("conv_direct", "conv_gather", "conv_1x1", "conv", "conv_mve_direct", "conv_mve_gather"),
    "dense.c": ("dense",), "depthwise_conv2d.c": ("depthwise", "depthwise_multiplier", "depthwise_mve", "depthwise_dsp"), "depthwise_inplace.c": ("depthwise_inplace",),
    "global_avg_pool.c": ("mean",), "lookup.c": ("logistic", "hard_swish"), "pad.c": ("pad",),
    "pool2d.c": ("avg_pool2d", "max_pool2d"), "requantize.c": ("requantize",), "requantize_s16.c": ("requantize_s16",),
    "svdf.c": ("svdf",), "softmax.c": ("softmax",), "softmax_wide.c": ("softmax_wide", "softmax_wide_tflm"),
    "softmax_tflm.c": ("softmax_tflm",),
    "requantize_wide.c": ("requantize_wide_s16",), "pad_s16.c": ("pad_s16",),
    "transpose.c": ("transpose",), "resize_nearest.c": ("resize_nearest",),
    "channel_slice.c": ("channel_slice",), "channel_gather.c": ("channel_gather",),
    "resize_bilinear.c": ("resize_bilinear",),
    "space_to_depth.c": ("space_to_depth",), "depth_to_space.c": ("depth_to_space",),
    "sub.c": ("sub", "sub_const", "squared_difference", "squared_difference_const"), "min_max.c": ("maximum", "minimum", "maximum_const", "minimum_const"),
    "prelu.c": ("prelu",),
    "int16.c": ("conv_s16", "depthwise_s16", "depthwise_inplace_s16", "max_pool2d_s16", "avg_pool2d_s16", "add_s16",
                "mean_s16", "dense_s16", "softmax_s16"),
    "weight_offset.c": ("conv_wofs", "depthwise_wofs", "dense_wofs"), "avg_pool_half_up.c": ("avg_pool_half_up",),
    "add_litert.c": ("add_litert",), "add_litert_s16.c": ("add_litert_s16",), "add_const_litert.c": ("add_const_litert",), "add_uint8.c": ("add_uint8",),
    "conversion.c": ("dequantize", "quantize"), "float_unary.c": ("float_unary",), "hard_sigmoid.c": ("hard_sigmoid",),
    "abs.c": ("abs", "abs_s16"), "lstm.c": ("lstm", "lstm_tflm"), "lstm_cell.c": ("scan",), "gru.c": ("gru",),
    "rnn.c": ("rnn",), "recurrent_cell.c": ("scan",),
    "lstm_stateful.c": ("lstm", "lstm_tflm"), "lstm_cell_state.c": ("lstm",),
    "transpose_conv.c": ("transpose_conv", "transpose_conv_s16"),
    "dilated.c": ("conv_dilated",),
    "pack_step.c": ("pack_step",),
    "chain.c": ("chain",),  # (the chains scheme's depthwise sums; its first and last ops count as their own kernels)
    "time_ring.c": ("time_ring",), "time_mean.c": ("time_mean",),  # (elsewhere its loop is counted as the plain windows': conv, depthwise)
}
# An op's header (<op>.h, beside <op>.c: its params struct and kernels) goes with its source.
KERNEL_SOURCE_FAMILIES |= {name.removesuffix(".c") + ".h": families for name, families in KERNEL_SOURCE_FAMILIES.items()}
# The float32 kernels' exp, tanh and logistic (no source of its own): the families that call them.
KERNEL_SOURCE_FAMILIES["float_math.h"] = ("gru", "rnn", "lstm", "float_unary", "logistic", "softmax")


def kernel_digests() -> dict[str, str]:
    """File name -> digest of each kernel source and block template: what coefficients are fitted on.
    A header counts by its inline functions and macros only, so that declaring a new kernel in it
    does not invalidate the calibrations."""
    digests = {}
    root = resources.files("msfcnn.codegen")
    for folder in ("kernels", "templates/schemes"):
        for item in sorted(root.joinpath(folder).iterdir(), key=lambda i: i.name):
            if item.name.endswith((".c", ".h", ".j2")):
                text = item.read_text()
                if item.name.endswith(".h"):
                    text = _inline_code(text)
                digests[item.name] = hashlib.sha256(text.encode()).hexdigest()[:16]
    return digests


def calibrated_sources(coefficients: dict[str, float]) -> dict[str, str]:
    """The digests a calibration with these coefficients vouches for (see KERNEL_SOURCE_FAMILIES)."""
    families = {name.split(":")[0] for name in coefficients}
    families |= {f.removesuffix("_f32") for f in families}
    return {name: digest for name, digest in kernel_digests().items()
            if name not in KERNEL_SOURCE_FAMILIES or families & set(KERNEL_SOURCE_FAMILIES[name])}


def _inline_code(header: str) -> str:
    """A header's preprocessor lines (but #include) and `static inline` function definitions, in order."""
    kept, depth, inside = [], 0, False
    for line in header.splitlines():
        directive = line.startswith("#") and not line.startswith("#include")
        if directive or inside or line.startswith("static inline"):
            kept.append(line)
        if line.startswith("static inline") or inside:
            depth += line.count("{") - line.count("}")
            inside = depth > 0 or (line.startswith("static inline") and "{" not in line and ";" not in line)
    return "\n".join(kept)


def coefficients_path(target: str):
    return resources.files("msfcnn.latency").joinpath("coefficients", f"{target}.json")


def calibrated_targets() -> list[str]:
    folder = resources.files("msfcnn.latency").joinpath("coefficients")
    return sorted(item.name[:-5] for item in folder.iterdir() if item.name.endswith(".json"))


def load(target: str) -> LatencyModel:
    path = coefficients_path(target)
    if not path.is_file():
        raise UserError(f"no latency model for target {target!r}{did_you_mean(target, calibrated_targets())} (calibrated: {', '.join(calibrated_targets()) or 'none'}; "
                        f"run scripts/calibrate_latency.py --target {target})")
    return LatencyModel.from_dict(json.loads(path.read_text()))
