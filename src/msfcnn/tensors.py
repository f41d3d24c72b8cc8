"""Network inputs and outputs as numpy arrays in the model's own layout (batch dimension optional)."""

from __future__ import annotations

import io
import tokenize
import zipfile
from math import prod

import numpy as np

from .errors import UserError
from .files import write_atomic
from .ir import Graph
from .numerics import quantize_float


def model_input_shape(graph: Graph, k: int = 0) -> tuple[int, ...]:
    """Input k's shape in the model's own layout, with a batch of 1."""
    h, w, c = graph.input_spec(k).shape
    return (1, c, h, w) if graph.layout == "NCHW" else (1, h, w, c)


def random_input(graph: Graph, seed: int = 0):
    """A seeded random input in the model's layout; a list of them, one per input, for a model
    with several (the executors' `Inputs`)."""
    rng = np.random.default_rng(seed)
    xs = [_random_array(graph, rng, model_input_shape(graph, k)) for k in range(len(graph.input_tensors))]
    return xs[0] if len(xs) == 1 else xs


def _random_array(graph: Graph, rng: np.random.Generator, shape) -> np.ndarray:
    if graph.uint8_input:
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    if graph.dtype in ("int8", "int16"):
        info = np.iinfo(graph.element.numpy)
        return rng.integers(info.min, info.max + 1, size=shape, dtype=graph.element.numpy)
    return rng.standard_normal(shape).astype(np.float32)


def load_input(path: str, graph: Graph):
    """Read an .npy input; the batch dimension may be left out. Float data for an int8 model is
    quantised with the model's input scale and zero point. A model with several inputs reads an
    .npz file holding input0, input1, ... (one array per input, in the model's order) and returns
    their list."""
    n = len(graph.input_tensors)
    if n == 1 and not path.endswith(".npz"):
        return _load_array(lambda: open(path, "rb"), path, graph, 0)
    if not path.endswith(".npz"):
        raise UserError(f"{path}: {graph.name} has {n} inputs: give an .npz file with arrays "
                        f"{', '.join(f'input{k}' for k in range(n))}")
    try:
        with zipfile.ZipFile(path) as archive:
            names = {name.removesuffix(".npy") for name in archive.namelist()}
            expected = {f"input{k}" for k in range(n)}
            if names != expected:
                raise UserError(f"{path}: expected arrays {', '.join(sorted(expected))}, found "
                                f"{', '.join(sorted(names)) or 'none'}")
            xs = [_load_array(lambda k=k: archive.open(f"input{k}.npy"), f"{path}:input{k}", graph, k)
                  for k in range(n)]
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, zipfile.BadZipFile, KeyError) as err:
        raise UserError(f"{path}: not a readable .npz archive ({type(err).__name__}: {err})") from None
    return xs


def load_steps(path: str, graph: Graph) -> list:
    """A stateful model's sequence of inputs (Graph.states), to run in order: an .npy array whose
    first axis is the step (each step an input as `load_input` reads it; an array of one input is
    one step), or an .npz archive of one such input per step, in the archive's order."""
    if len(graph.input_tensors) > 1:
        return [load_input(path, graph)]
    if path.endswith(".npz"):
        try:
            with zipfile.ZipFile(path) as archive:
                names = [name for name in archive.namelist() if name.endswith(".npy")]
                if not names:
                    raise UserError(f"{path}: the archive holds no arrays (one per step expected)")
                return [_load_array(lambda n=n: archive.open(n), f"{path}:{n.removesuffix('.npy')}", graph, 0)
                        for n in names]
        except FileNotFoundError:
            raise UserError(f"{path}: no such file") from None
        except (OSError, zipfile.BadZipFile, KeyError) as err:
            raise UserError(f"{path}: not a readable .npz archive ({type(err).__name__}: {err})") from None
    try:
        with open(path, "rb") as f:
            shape = _npy_shape(f)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except OSError as err:
        raise UserError(f"{path}: cannot read: {err.strerror}") from None
    if shape is None or not shape or _one_input(shape, graph):
        return [load_input(path, graph)]  # one step (or what load_input says is wrong with the file)
    if not _one_input(shape[1:], graph) or shape[0] == 0:
        expected = model_input_shape(graph)
        raise UserError(f"{path}: shape {list(shape)} is neither one input {list(expected)} nor a sequence of them "
                        f"(steps first) ({graph.layout}, batch optional)")
    array = np.load(path, allow_pickle=False)
    return [_load_array(lambda step=step: _as_npy(step), f"{path}[{i}]", graph, 0) for i, step in enumerate(array)]


def _one_input(shape: tuple, graph: Graph) -> bool:
    """Whether an array of `shape` is one input of the (single-input) model, batch optional."""
    expected = model_input_shape(graph)
    declared = graph.input_spec(0).declared_shape or ()
    return tuple(shape) in (tuple(expected), tuple(expected[1:]), tuple(declared), tuple(declared[1:]))


def _as_npy(array: np.ndarray) -> io.BytesIO:
    """An array as .npy data in memory (for _load_array, which reads a file)."""
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    buffer.seek(0)
    return buffer


def _load_array(open_npy, name: str, graph: Graph, k: int) -> np.ndarray:
    """Input k from the .npy data `open_npy()` opens (a binary file; `name` in messages), checked
    and shaped."""
    expected = model_input_shape(graph, k)
    declared = graph.input_spec(k).declared_shape or ()
    quant = graph.input_spec(k).quant
    try:
        with open_npy() as f:
            shape = _npy_shape(f)
        if shape is not None and shape not in (tuple(expected), tuple(expected[1:]), declared, declared[1:]):
            # checked before loading: a header may claim terabytes
            raise _shape_error(name, shape, expected, graph, declared)
        with open_npy() as f:
            array = np.lib.format.read_array(f, allow_pickle=False)
    except FileNotFoundError:
        raise UserError(f"{name}: no such file") from None
    except (OSError, ValueError, EOFError, SyntaxError, tokenize.TokenError) as err:  # the last two: a bad header
        raise UserError(f"{name}: not a readable .npy array ({type(err).__name__}: {err})") from None
    if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise UserError(f"{name}: expected an array of real numbers, got {array.dtype}")
    with np.errstate(over="ignore"):  # float64 beyond float32's range becomes an infinity, caught below
        finite = np.isfinite(array.astype(np.float32))
    if not finite.all():  # NaN and infinities have no quantised value, and poison a float network
        bad = array.size - int(np.count_nonzero(finite))
        raise UserError(f"{name}: the input has {bad} NaN, infinite or beyond-float32 value{'s' if bad > 1 else ''} "
                        f"(the first at index {[int(i) for i in np.argwhere(~finite)[0]]}); expected finite numbers")
    if declared and array.shape in (declared, declared[1:]) and array.size == prod(expected):
        array = array.reshape(expected)  # the model file's own shape: the same values in the same order
    if array.shape == expected[1:]:
        array = array[np.newaxis]
    if array.shape != expected:
        raise _shape_error(name, array.shape, expected, graph, declared)
    if graph.uint8_input and array.dtype == np.uint8:
        pass  # the executor shifts it to int8
    elif graph.dtype in ("int8", "int16") and (array.dtype != graph.element.numpy or graph.uint8_input):
        if not np.issubdtype(array.dtype, np.floating):
            kind = "uint8" if graph.uint8_input else graph.dtype
            raise UserError(f"{name}: expected {kind} (or float to quantise) data, got {array.dtype}")
        array = array.astype(np.float32)
        if not graph.float_input:  # a float-edged graph quantises inside the executor, as TFLite does
            array = quantize_float(array, quant, graph.numerics, graph.element.numpy)
    elif graph.dtype == "float32":
        array = array.astype(np.float32)
    return array


def _shape_error(path: str, shape, expected, graph: Graph, declared) -> UserError:
    also = f" or the model file's {list(declared)}" if declared and tuple(declared) != tuple(expected) else ""
    return UserError(f"{path}: input shape {list(shape)} does not match the model's {list(expected)}{also} "
                     f"({graph.layout}, batch optional)")


def _npy_shape(f) -> tuple | None:
    """The shape the header of the .npy data in binary file `f` declares, or None if the header is
    not one numpy reads (reading the array then says why)."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, _, _ = read(f)
    except Exception:  # noqa: BLE001 - reading the array again says what is wrong
        return None
    return tuple(int(d) for d in shape)


def save_output(path: str, array: np.ndarray) -> None:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    write_atomic(path, buffer.getvalue())


def save_outputs(path: str, arrays: list[np.ndarray], model: str = "the model") -> None:
    """A model's outputs: one array in an .npy file, or every output in an .npz file (arrays
    output0, output1, ... in the model's order); a model with several outputs needs the .npz."""
    if path.endswith(".npz"):
        buffer = io.BytesIO()
        np.savez(buffer, **{f"output{k}": y for k, y in enumerate(arrays)})
        write_atomic(path, buffer.getvalue())
    elif len(arrays) == 1:
        save_output(path, arrays[0])
    else:
        raise UserError(f"{model} has {len(arrays)} outputs: give --output a .npz file to write them all")
