"""A streaming model (`--streaming`) over a long input, window by window: its calls in order from
the initial state, every window's output, and each one compared with the whole-window model's
(the unfused numpy executor on the window's frames). `run --streaming` and `verify --streaming`
go through here."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import pipeline
from .errors import UserError
from .frontends.sliding import model_frames, model_time_axis, window_frames, window_steps
from .ir import Graph
from .schedule import Schedule
from .tensors import random_input

EXTRA_WINDOWS = 19  # a random long input holds 20 windows at a hop of one frame


@dataclass(frozen=True)
class Windows:
    """A long input run window by window."""

    steps: list  # each call's frames, in order
    warm: int  # the calls before the one that completes window 0
    outputs: np.ndarray  # every window's output, stacked in window order (the model's layout)
    whole: np.ndarray  # the whole-window model's output on each window, the same way
    hop: int

    @property
    def count(self) -> int:
        return len(self.outputs)

    @property
    def equal(self) -> int:
        """Windows whose output equals the whole-window model's: bit for bit, or for float32 within
        verify's tolerance (the sums of a window's rows may be taken in another order)."""
        return sum(_same(a, b) for a, b in zip(self.outputs, self.whole))


def long_input(whole: Graph, path: str | None, seed: int) -> np.ndarray:
    """The long input of `--input` (an .npy array in the model's layout, frames along its time axis,
    of the model's input type; (C, F) for a model of an (N, C, L) input), or a seeded random one of
    EXTRA_WINDOWS + 1 windows."""
    if path is None:  # seeded random windows, one after the other, cut to the frames wanted
        size = window_frames(whole)
        parts = [_unbatched(whole, random_input(whole, seed + k)) for k in range(1 + -(-EXTRA_WINDOWS // size))]
        axis = model_time_axis(whole)
        return np.take(np.concatenate(parts, axis=axis), range(size + EXTRA_WINDOWS), axis=axis)
    try:
        x = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, ValueError) as err:
        raise UserError(f"{path}: not a readable .npy array ({err})") from None
    expected = random_input(whole, seed).dtype
    if x.dtype != expected:
        raise UserError(f"{path}: a long input of {whole.name} holds {expected} values, not {x.dtype}")
    return model_frames(whole, x)


def run_windows(whole: Graph, schedule: Schedule, frames: np.ndarray, hop: int) -> Windows:
    """The streaming schedule's calls over `frames` (fused numpy executor), each window's output,
    and the whole-window model's on the same frames."""
    steps, warm = window_steps(whole, frames, hop)
    runs = pipeline.run_steps(schedule, steps)
    outputs = np.stack([run.outputs[0] for run in runs[warm:]])
    axis, size = model_time_axis(whole), window_frames(whole)
    frames = _unbatched(whole, frames)
    whole_outputs = np.stack([pipeline.run_reference(whole, np.take(frames, range(w * hop, w * hop + size), axis=axis))
                              for w in range(len(outputs))])
    return Windows(steps, warm, outputs, whole_outputs, hop)


def _same(ours: np.ndarray, whole: np.ndarray) -> bool:
    if not np.issubdtype(whole.dtype, np.floating):
        return bool(np.array_equal(ours, whole))
    return bool(pipeline.max_abs_diff(ours, whole) <= pipeline.float_tolerance(whole))


def first_window(whole: Graph, frames: np.ndarray) -> np.ndarray:
    """The first window's frames of a long input: an input of the whole-window model."""
    return np.take(_unbatched(whole, frames), range(window_frames(whole)), axis=model_time_axis(whole))


def _unbatched(whole: Graph, x: np.ndarray) -> np.ndarray:
    return x[0] if x.ndim == len(whole.input_shape) + 1 else x
