"""Mutated model files, layer lists, plan files and .npy inputs, run through every command that
reads them (plan, run, compile, pareto, sweep, fit and verify, a share of it on host-sanitize),
in-process (`msfcnn.cli.main`), each case in a process of its own (forked) with a time limit.
`.tflite` files are mutated field by field through the schema (support/tflite_fields.py: shapes,
types, buffer indices, scales, zero points, opcodes, operator inputs, options, weights, biases) as
well as byte by byte. A failing case's files can be saved (`save`) with its command line.

What every case must show (docs/cli.md): no traceback (no exception out of `main`), exit status 0
or 2, on status 2 exactly one line on stderr (`msfcnn: error: ...`) and nothing else there, on
status 0 nothing on stderr (stderr is not a TTY here, so no progress either), no run over the
time limit, and no half-written output: no temporary file left beside an output, an output file
written on success is whole (the plan parses, the array loads), none written on an error.

Cases are a pure function of (seed, index): case i of a run with seed s is always the same input
and the same command line, so a failure is reproduced with `--seed s --only i`.
"""

from __future__ import annotations

import contextlib
import io
import json
import multiprocessing
import os
import random
import shutil
import signal
import struct
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "models"
TIME_LIMIT = 20  # seconds per case
BUILD_TIME_LIMIT = 180  # seconds for a case that builds C (verify, fit): a compiler per case
if str(ROOT / "tests") not in sys.path:  # `python -m tests.fuzz` as well as pytest
    sys.path.insert(0, str(ROOT / "tests"))
from support.tflite_fields import all_fields, tensor_values  # noqa: E402

# Small models only: each command must take well under a second on them.
TFLITE_SEEDS = sorted(p.name for p in FIXTURES.glob("*.tflite")
                      if p.name not in {"mbv1_025_vww.tflite", "mbv2_035.tflite", "dscnn.tflite"})
ONNX_SEEDS = sorted(p.name for p in FIXTURES.glob("*.onnx"))

# Small layer lists covering every layer kind (docs/models.md).
JSON_SEEDS = [
    {"name": "chain", "input": [12, 12, 3], "layers": [
        {"op": "conv2d", "filters": 8, "kernel": 3, "stride": 2, "padding": 1, "act": "relu"},
        {"op": "depthwise_conv2d", "kernel": 3, "stride": 1, "padding": 1, "act": "relu6"},
        {"op": "conv2d", "filters": 4, "kernel": 1, "stride": 1, "padding": 0}]},
    {"name": "res", "input": [8, 8, 4], "layers": [
        {"op": "conv2d", "filters": 4, "kernel": 3, "stride": 1, "padding": 1},
        {"op": "depthwise_conv2d", "kernel": 3, "depth_multiplier": 1, "padding": 1},
        {"op": "add", "from": 0, "act": "relu"},
        {"op": "max_pool2d", "kernel": 2, "stride": 2},
        {"op": "avg_pool2d", "kernel": 2, "stride": 1},
        {"op": "global_avg_pool"},
        {"op": "dense", "units": 3},
        {"op": "softmax"}]},
    {"name": "pools", "input": [9, 7, 2], "layers": [
        {"op": "avg_pool2d", "kernel": 3, "stride": 2, "padding": 1},
        {"op": "max_pool2d", "kernel": [2, 3], "stride": [1, 2]},
        {"op": "conv2d", "filters": 2, "kernel": [1, 3], "stride": 1, "padding": [0, 1]}]},
]

INTERESTING_INTS = [0, 1, -1, 2, 3, 7, 8, 16, 127, 128, 255, 256, -128, 2**15, 2**16, 2**31 - 1, -2**31,
                    2**32, 2**63, 10**6, 10**30]


@dataclass
class Case:
    index: int
    kind: str           # tflite, onnx, json, plan, npy
    how: str            # the mutation
    argv: list[str]     # the command line, with {IN}, {OUT}, {MODEL}, {PLAN} placeholders filled in
    output: str | None  # the output file or folder the command writes, if any
    output_kind: str | None = None  # json, npy, dir


@dataclass
class Result:
    index: int
    kind: str
    how: str
    argv: list[str]
    status: object       # int, or "exception", "timeout"
    problems: list[str] = field(default_factory=list)
    stderr: str = ""
    seconds: float = 0.0


# ---------------------------------------------------------------------------------------------
# Byte-level mutations

def mutate_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    b = bytearray(data)
    how = rng.choice(["flip", "byte", "int32", "truncate", "delete", "insert", "duplicate", "zero", "splice"])
    n = len(b)
    if n == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))), "random"
    if how == "flip":
        for _ in range(rng.randrange(1, 9)):
            i = rng.randrange(n)
            b[i] ^= 1 << rng.randrange(8)
    elif how == "byte":
        for _ in range(rng.randrange(1, 5)):
            b[rng.randrange(n)] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)])
    elif how == "int32":  # structure-aware for flatbuffers / protobuf: offsets, lengths, dims
        i = rng.randrange(0, max(1, n - 4)) & ~3
        value = rng.choice(INTERESTING_INTS) & 0xFFFFFFFF
        b[i:i + 4] = struct.pack("<I", value)[:len(b[i:i + 4])]
    elif how == "truncate":
        b = b[:rng.randrange(n)]
    elif how == "delete":
        i = rng.randrange(n)
        del b[i:i + rng.randrange(1, 33)]
    elif how == "insert":
        i = rng.randrange(n + 1)
        b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 33)))
    elif how == "duplicate":
        i = rng.randrange(n)
        j = min(n, i + rng.randrange(1, 65))
        k = rng.randrange(n + 1)
        b[k:k] = b[i:j]
    elif how == "zero":
        i = rng.randrange(n)
        b[i:i + rng.randrange(1, 65)] = bytes(len(b[i:i + 64]))[:len(b[i:i + rng.randrange(1, 65)])]
    elif how == "splice":  # the tail of the file over its head
        i = rng.randrange(n)
        b = b[i:] + b[:i]
    return bytes(b), f"bytes:{how}"


# ---------------------------------------------------------------------------------------------
# Field-aware mutations of .tflite files (through the schema's reader classes)

# Values each kind of field gets: its type's extremes, 0, -1, small and large ones.
FIELD_VALUES = {
    "<b": [0, 1, -1, 127, -128], "<B": [0, 1, 255, 9, 17], "<h": [0, -1, 32767, -32768],
    "<H": [0, 65535], "<i": [0, 1, -1, 2, 3, 7, 1000, 65536, 2**31 - 1, -2**31],
    "<I": [0, 1, 2**31, 2**32 - 1], "<q": [0, -1, 2**62, 2**63 - 1, -2**63], "<Q": [0, 2**64 - 1],
    "<f": [0.0, -0.0, -1.0, 1e-45, 1e-38, 3.4e38, float("inf"), float("-inf"), float("nan"), 1e6, 0.5],
    "<d": [0.0, float("inf"), float("nan")], "<?": [True, False]}


def mutate_tflite_fields(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """One to three stored fields set to hostile values: a field of the model (a tensor's type,
    buffer, shape, scale, zero point; an operator's opcode, inputs, options; an opcode's code), or
    a value of a constant tensor (a weight, a bias). Falls back to a byte mutation for a file the
    reader classes cannot walk."""
    try:
        fields = all_fields(data)
        consts = _const_values(data, rng)
    except Exception:  # noqa: BLE001 - a seed the reader cannot walk: mutate its bytes instead
        return mutate_bytes(rng, data)
    out, names = bytearray(data), []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        pool = consts if consts and rng.random() < 0.25 else fields
        field = rng.choice(pool)
        value = rng.choice(FIELD_VALUES.get(field.fmt, [0]))
        try:
            field.write(out, value)
        except struct.error:
            continue
        names.append(f"{field.what}={value}")
    return bytes(out), "fields:" + ",".join(names)


def _const_values(data: bytes, rng: random.Random) -> list:
    import tflite as schema
    tensors = schema.Model.GetRootAs(data, 0).Subgraphs(0).TensorsLength()
    return tensor_values(data, rng.randrange(tensors)) if tensors else []


# ---------------------------------------------------------------------------------------------
# Structured mutations of JSON documents (layer lists and plans)

def _random_value(rng: random.Random, depth: int = 0):
    choice = rng.randrange(12)
    if choice == 0:
        return rng.choice(INTERESTING_INTS)
    if choice == 1:
        return -rng.choice(INTERESTING_INTS)
    if choice == 2:
        return rng.choice([0.5, -0.0, 1e308, 1e-308, 3.0, 2.5])
    if choice == 3:
        return rng.choice(["", "inf", "nan", "relu", "conv2d", "hcache", "exact", "paper", "x" * 1000])
    if choice == 4:
        return None
    if choice == 5:
        return rng.choice([True, False])
    if choice == 6 and depth < 3:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if choice == 7 and depth < 3:
        return {rng.choice(["op", "kernel", "first", "x"]): _random_value(rng, depth + 1)}
    if choice == 8:
        return [rng.choice([1, 2, 3, 0, -1])] * rng.choice([1, 2, 3, 4])
    return rng.choice([1, 2, 3, 4, 5, 9, 64, 1000])


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from _paths(value, prefix + (i,))


def _get(doc, path):
    for key in path:
        doc = doc[key]
    return doc


def mutate_json(rng: random.Random, doc) -> tuple[str, str]:
    """A mutated copy of `doc`, as text."""
    doc = json.loads(json.dumps(doc))
    how = rng.choice(["replace", "replace", "delete", "add", "duplicate", "swap", "nest", "bigint", "wrap",
                      "shuffle", "empty"])
    paths = list(_paths(doc))
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        path = rng.choice(paths)
        if how in ("replace", "bigint"):
            value = _random_value(rng) if how == "replace" else rng.choice(
                [10**rng.randrange(10, 400), -10**rng.randrange(10, 400), 2**31, 2**63, 2**64])
            if not path:
                doc = value
            else:
                _get(doc, path[:-1])[path[-1]] = value
            paths = list(_paths(doc))
        elif how == "delete" and path:
            parent = _get(doc, path[:-1])
            del parent[path[-1]]
            paths = list(_paths(doc))
        elif how == "add":
            target = _get(doc, path)
            if isinstance(target, dict):
                target[rng.choice(["op", "kernel", "stride", "padding", "from", "units", "rows", "scheme",
                                   "io_counted", "extra"])] = _random_value(rng)
            elif isinstance(target, list):
                target.insert(rng.randrange(len(target) + 1), _random_value(rng))
            paths = list(_paths(doc))
        elif how == "duplicate":
            target = _get(doc, path)
            if isinstance(target, list) and target:
                target.extend(json.loads(json.dumps(target)) * rng.randrange(1, 4))
            paths = list(_paths(doc))
        elif how == "swap":
            other = rng.choice(paths)
            if path and other and not _is_prefix(path, other) and not _is_prefix(other, path):
                a, b = _get(doc, path), _get(doc, other)
                _get(doc, path[:-1])[path[-1]], _get(doc, other[:-1])[other[-1]] = b, a
                paths = list(_paths(doc))
        elif how == "shuffle":
            target = _get(doc, path)
            if isinstance(target, list):
                rng.shuffle(target)
                paths = list(_paths(doc))
        elif how == "empty":
            target = _get(doc, path)
            if isinstance(target, (list, dict)):
                target.clear()
                paths = list(_paths(doc))
    text = json.dumps(doc)
    if how == "nest":  # deep nesting (parser limits)
        depth = rng.choice([100, 1000, 5000, 100000])
        text = "[" * depth + text + "]" * depth
    elif how == "wrap":
        text = rng.choice(["", "\ufeff", "null ", "[", "{"]) + text + rng.choice(["", "]", "}", ",", " x"])
    return text, f"json:{how}"


def _is_prefix(a, b):
    return len(a) <= len(b) and tuple(b[:len(a)]) == tuple(a)


# ---------------------------------------------------------------------------------------------
# Structured mutations of ONNX models (protobuf, through the onnx package)

def mutate_onnx(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    import onnx
    from onnx import helper
    model = onnx.load_from_string(data)
    g = model.graph
    how = rng.choice(["attr", "attr", "dims", "init_dims", "init_data", "dtype", "op_type", "drop_node",
                      "rewire", "drop_init", "opset", "input_dims", "swap_nodes"])
    if how == "attr" and g.node:
        node = rng.choice(g.node)
        if node.attribute:
            a = rng.choice(node.attribute)
            if a.type == onnx.AttributeProto.INTS:
                new = [rng.choice(INTERESTING_INTS[:12] + [-1, -2]) for _ in range(rng.choice([0, 1, 2, 4, len(a.ints)]))]
                del a.ints[:]
                a.ints.extend(v for v in new if -2**63 <= v < 2**63)
            elif a.type == onnx.AttributeProto.INT:
                a.i = rng.choice([0, 1, -1, 2, 5, 100, 2**31])
            elif a.type == onnx.AttributeProto.FLOAT:
                a.f = rng.choice([0.0, -1.0, float("nan"), float("inf"), 1e30])
            elif a.type == onnx.AttributeProto.STRING:
                a.s = rng.choice([b"SAME_UPPER", b"SAME_LOWER", b"VALID", b"NOTSET", b"bogus", b""])
        else:
            node.attribute.append(helper.make_attribute(rng.choice(["strides", "pads", "group", "axis"]),
                                                        rng.choice([[2, 2], [1, 1, 1, 1], 3, 0])))
    elif how in ("dims", "input_dims"):
        values = list(g.input if how == "input_dims" else list(g.input) + list(g.output) + list(g.value_info))
        if values:
            v = rng.choice(values)
            dims = v.type.tensor_type.shape.dim
            if dims:
                d = rng.choice(dims)
                if rng.random() < 0.3:
                    d.dim_param = "N"
                else:
                    d.dim_value = rng.choice([0, 1, 2, 3, 1000, 2**31])
    elif how == "init_dims" and g.initializer:
        t = rng.choice(g.initializer)
        if t.dims:
            t.dims[rng.randrange(len(t.dims))] = rng.choice([0, 1, 2, 3, 7, 1000])
    elif how == "init_data" and g.initializer:
        t = rng.choice(g.initializer)
        if t.raw_data:
            raw = bytearray(t.raw_data)
            if rng.random() < 0.5:
                raw = raw[:rng.randrange(len(raw) + 1)]
            else:
                for _ in range(4):
                    i = rng.randrange(len(raw)) & ~3
                    raw[i:i + 4] = struct.pack("<f", rng.choice([float("nan"), float("inf"), -float("inf"), 1e38]))
            t.raw_data = bytes(raw)
        elif t.float_data:
            t.float_data[rng.randrange(len(t.float_data))] = rng.choice([float("nan"), float("inf")])
    elif how == "dtype":
        items = list(g.initializer) or []
        if items and rng.random() < 0.5:
            rng.choice(items).data_type = rng.choice([0, 2, 3, 6, 7, 10, 11, 16])
        elif g.input:
            rng.choice(list(g.input)).type.tensor_type.elem_type = rng.choice([0, 2, 3, 6, 7, 10, 11])
    elif how == "op_type" and g.node:
        rng.choice(g.node).op_type = rng.choice(["Conv", "Relu", "Add", "MaxPool", "AveragePool", "Gemm", "MatMul",
                                                 "Flatten", "Reshape", "Clip", "Tanh", "Concat", "Identity"])
    elif how == "drop_node" and g.node:
        del g.node[rng.randrange(len(g.node))]
    elif how == "rewire" and g.node:
        node = rng.choice(g.node)
        names = [i.name for i in g.input] + [t.name for t in g.initializer] + [o for n in g.node for o in n.output]
        names += ["", "missing"]
        if node.input and rng.random() < 0.7:
            node.input[rng.randrange(len(node.input))] = rng.choice(names)
        else:
            node.input.append(rng.choice(names))
    elif how == "drop_init" and g.initializer:
        del g.initializer[rng.randrange(len(g.initializer))]
    elif how == "opset" and model.opset_import:
        model.opset_import[0].version = rng.choice([1, 6, 9, 11, 13, 99])
    elif how == "swap_nodes" and len(g.node) > 1:
        i, j = rng.sample(range(len(g.node)), 2)
        a, b = onnx.NodeProto(), onnx.NodeProto()
        a.CopyFrom(g.node[i])
        b.CopyFrom(g.node[j])
        g.node[i].CopyFrom(b)
        g.node[j].CopyFrom(a)
    return model.SerializeToString(), f"onnx:{how}"


# ---------------------------------------------------------------------------------------------
# .npy inputs

def mutate_npy(rng: random.Random, shape: tuple, dtype) -> tuple[bytes, str]:
    how = rng.choice(["shape", "batch", "dtype", "nan", "big", "object", "fortran", "scalar", "empty", "bytes",
                      "header", "complex", "bool", "valid"])
    shape = tuple(shape)
    x = np.random.default_rng(rng.randrange(2**32)).standard_normal(shape).astype(dtype) if shape else np.zeros(1)
    if how == "shape" and shape:
        s = list(shape)
        i = rng.randrange(len(s))
        s[i] = rng.choice([0, 1, s[i] + 1, max(1, s[i] - 1)])
        x = np.zeros(s, dtype=dtype)
    elif how == "batch":
        x = np.stack([x] * rng.choice([1, 2]))
        if rng.random() < 0.5:
            x = x[None]
    elif how == "dtype":
        x = x.astype(rng.choice([np.float64, np.float16, np.int8, np.uint8, np.int32, np.int64, np.uint64]))
    elif how == "nan":
        x = x.astype(np.float32)
        x.reshape(-1)[rng.randrange(x.size)] = rng.choice([np.nan, np.inf, -np.inf])
    elif how == "big":
        x = (x.astype(np.float64) * rng.choice([1e10, 1e40, 1e300]))
    elif how == "object":
        x = np.array([{"a": 1}, None], dtype=object)
    elif how == "fortran":
        x = np.asfortranarray(x)
    elif how == "scalar":
        x = np.array(rng.choice([1, 1.5]))
    elif how == "empty":
        x = np.zeros((0,) + shape[1:], dtype=dtype)
    elif how == "complex":
        x = x.astype(np.complex64)
    elif how == "bool":
        x = x > 0
    buf = io.BytesIO()
    np.save(buf, x, allow_pickle=True)
    data = buf.getvalue()
    if how == "bytes":
        data, _ = mutate_bytes(rng, data)
    elif how == "header":
        header_end = data.index(b"\n") + 1
        header = data[10:header_end].decode("latin1")
        header = rng.choice([header.replace("'descr': '", "'descr': '>"),
                             header.replace("False", "True"),
                             header.replace("(", "(-1, ", 1),
                             header.replace("(", "(999999999, ", 1),
                             header.replace("'descr'", "'desc'"),
                             "{'descr': 'O', 'fortran_order': False, 'shape': (1,), }"])
        header = header.rstrip("\n")
        pad = (64 - (10 + len(header) + 1) % 64) % 64
        header = header + " " * pad + "\n"
        data = data[:8] + struct.pack("<H", len(header)) + header.encode("latin1") + data[header_end:]
    return data, f"npy:{how}"


# ---------------------------------------------------------------------------------------------
# Cases

_PLAN_CACHE: dict[str, bytes] = {}


def _valid_plan(model: str) -> bytes:
    """The plan file `msfcnn plan MODEL -o` writes (cached per process)."""
    if model not in _PLAN_CACHE:
        from msfcnn.cli import main
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "plan.json")
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(["plan", model, "-o", out]) == 0
            _PLAN_CACHE[model] = Path(out).read_bytes()
    return _PLAN_CACHE[model]


def _model_input(model: str):
    from msfcnn import pipeline
    graph = pipeline.load(model, weights=True)
    from msfcnn.tensors import random_input
    x = random_input(graph, 0)
    return x.shape, x.dtype


KINDS = ["tflite", "tflite", "onnx", "onnx", "json", "json", "plan", "npy"]


BOARDS = ["nucleo-f767zi", "nucleo-f412zg", "nrf52840dk", "hifive1-revb", "esp32-c3-devkit"]
VERIFY_TARGETS = ["host", "host-sanitize"]


# Boards with several RAM regions, their regions' names, and names and sizes that are not.
REGION_BOARDS = {"stm32f407": ["sram", "ccm"], "stm32h743": ["dtcm", "axi_sram", "sram1_3", "sram4"],
                 "esp32-s3-devkitc-n8r8": ["sram", "psram"]}
REGION_SIZES = ["512", "4kB", "64kB", "1MB", "0", "-4kB", "1e400", "kB", "4KiB"]
REGION_COSTS = ["", ":1", ":2.5", ":8", ":0", ":-1", ":nan", ":inf", ":x"]
# Models a second one of `compile A B` or `fit A B`: small, and one that streams.
MORE_MODELS = ["op_gap.tflite", "op_pad.tflite", "onnx_conv_bn_relu.onnx", "../streaming/tcn_valid_int8.tflite"]


def _region_argv(rng: random.Random, builds: bool) -> list[str]:
    """--board with regions (with `builds`: compile links with it), --region NAME:SIZE[:COST]
    (repeated), --input-in REGION: some of them."""
    board = rng.choice(sorted(REGION_BOARDS))
    names = REGION_BOARDS[board] + ["flash", "nowhere", "", "SRAM"]
    argv = ["--board", board] if builds and rng.random() < 0.7 else []
    for _ in range(rng.choice([0, 0, 1, 2, 3])):
        argv += ["--region", f"{rng.choice(names)}:{rng.choice(REGION_SIZES)}{rng.choice(REGION_COSTS)}"]
    if rng.random() < 0.5:
        argv += ["--input-in", rng.choice(names)]
    return argv


def _stream_argv(rng: random.Random) -> list[str]:
    """--streaming (with a --hop at times) or --input-stream, or neither."""
    return rng.choice([[], [], ["--input-stream"], ["--streaming"], ["--streaming", "--hop", rng.choice(["1", "2", "0",
                                                                                                          "-3"])]])


def _more_models(rng: random.Random, path: str) -> list[str]:
    """Nothing mostly; else one or two more models (the mutated one again at times)."""
    if rng.random() < 0.6:
        return []
    pool = [str(FIXTURES / name) for name in MORE_MODELS] + [path]
    return [rng.choice(pool) for _ in range(rng.choice([1, 1, 2]))]


def _model_argv(rng: random.Random, path: str, out_dir: str, builds: bool = True):
    """A command on the mutated model; `builds`: also the ones that compile C (fit, verify)."""
    command = rng.choice(["plan", "plan", "run", "run", "compile", "pareto", "sweep"] * 3
                         + (["fit", "verify"] if builds else []))
    extra = rng.choice([[], [], ["--max-overhead", "1.2"], ["--max-ram", "4kB"], ["--strategy", "heuristic"],
                        ["--count-io"], ["--json"], ["--strategy", "vanilla"]])
    streams = _stream_argv(rng) if command in ("plan", "fit", "pareto", "verify") and rng.random() < 0.3 else []
    if command == "plan":
        out = os.path.join(out_dir, "plan.json")
        return ["plan", path, *extra, *streams, "-o", out], out, "json"
    if command == "run":
        out = os.path.join(out_dir, "y.npy")
        return ["run", path, *extra, "-o", out], out, "npy"
    regions = _region_argv(rng, builds) if rng.random() < 0.3 else []
    if command == "compile":
        out = os.path.join(out_dir, "c")
        return ["compile", path, *_more_models(rng, path), *[e for e in extra if e != "--json"], *regions,
                "-o", out], out, "dir"
    if command == "fit":  # plans for a board and bounds the stack with its compiler
        out = os.path.join(out_dir, "plan.json")
        board = regions or ["--board", rng.choice(BOARDS)]
        return (["fit", path, *_more_models(rng, path), *board, *streams, *rng.choice([[], ["--json"]]), "-o", out],
                out, "json")
    if command == "verify":  # builds and runs the C; host-sanitize reports undefined behaviour
        out = os.path.join(out_dir, "c")
        target = [] if "--board" in regions else ["--target", rng.choice(VERIFY_TARGETS)]
        return (["verify", path, *[e for e in extra if e != "--json"], *streams, *target, *regions, "-o", out],
                out, "dir")
    if command == "pareto":
        return ["pareto", path, *streams] + rng.choice([[], ["--json"], ["--count-io"]]), None, None
    return ["sweep", path, "--max-overhead", "1.2,inf", "--max-ram", "8kB"], None, None


def make_case(seed: int, index: int, work: str, builds: bool = True) -> Case:
    """Case `index` of seed `seed` (with `builds` or not): writes its input file(s) under `work`."""
    rng = random.Random(f"{seed}:{index}")
    kind = KINDS[index % len(KINDS)] if rng.random() < 0.9 else rng.choice(KINDS)
    os.makedirs(work, exist_ok=True)
    if kind in ("tflite", "onnx", "json"):
        if kind == "tflite":
            name = rng.choice(TFLITE_SEEDS)
            raw = (FIXTURES / name).read_bytes()
            data, how = mutate_tflite_fields(rng, raw) if rng.random() < 0.6 else mutate_bytes(rng, raw)
            path = os.path.join(work, "m.tflite")
        elif kind == "onnx":
            name = rng.choice(ONNX_SEEDS)
            raw = (FIXTURES / name).read_bytes()
            data, how = mutate_onnx(rng, raw) if rng.random() < 0.6 else mutate_bytes(rng, raw)
            path = os.path.join(work, "m.onnx")
        else:
            doc = rng.choice(JSON_SEEDS)
            name = doc["name"]
            if rng.random() < 0.8:
                text, how = mutate_json(rng, doc)
                data = text.encode()
            else:
                data, how = mutate_bytes(rng, json.dumps(doc).encode())
            path = os.path.join(work, "m.json")
        Path(path).write_bytes(data)
        argv, out, out_kind = _model_argv(rng, path, work, builds)
        return Case(index, kind, f"{name} {how}", argv, out, out_kind)
    model = str(FIXTURES / rng.choice(["op_gap.tflite", "resnet8.tflite" if rng.random() < 0.2 else "op_pad.tflite",
                                       "onnx_conv_bn_relu.onnx", "onnx_residual_add.onnx", "extra_float_io.tflite",
                                       "op_dw_k3_s2_same.tflite"]))
    if kind == "plan":
        doc = json.loads(_valid_plan(model))
        if rng.random() < 0.8:
            text, how = mutate_json(rng, doc)
            data = text.encode()
        else:
            data, how = mutate_bytes(rng, _valid_plan(model))
        path = os.path.join(work, "plan.json")
        Path(path).write_bytes(data)
        out = os.path.join(work, "y.npy")
        return Case(index, kind, f"{Path(model).name} {how}", ["run", model, "--plan", path, "-o", out], out, "npy")
    shape, dtype = _model_input(model)
    data, how = mutate_npy(rng, shape, dtype)
    path = os.path.join(work, "x.npy")
    Path(path).write_bytes(data)
    out = os.path.join(work, "y.npy")
    return Case(index, kind, f"{Path(model).name} {how}", ["run", model, "--input", path, "-o", out] +
                rng.choice([[], ["--json"], ["--max-overhead", "1.3"]]), out, "npy")


# ---------------------------------------------------------------------------------------------
# Running and checking one case

class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def run_case(seed: int, index: int, base: str, time_limit: int = TIME_LIMIT, save: str | None = None,
             builds: bool = True) -> Result:
    import warnings
    from msfcnn.cli import main
    work = os.path.join(base, f"case{index}")
    shutil.rmtree(work, ignore_errors=True)
    case = make_case(seed, index, work, builds)
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    old = signal.signal(signal.SIGALRM, _alarm)
    if case.argv[0] in ("verify", "fit") or "--board" in case.argv:  # compile --board links with a compiler too
        time_limit = max(time_limit, BUILD_TIME_LIMIT)
    signal.alarm(time_limit)
    status: object
    problems: list[str] = []
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("default")  # warnings reach stderr as they would for a user
            try:
                status = main(case.argv)
            except SystemExit as exc:  # argparse --help / --version only
                status = exc.code if isinstance(exc.code, int) else 2
    except _Timeout:
        status = "timeout"
        problems.append(f"ran over {time_limit} s")
    except BaseException:  # noqa: BLE001 - a traceback is what the harness looks for
        status = "exception"
        problems.append("traceback:\n" + traceback.format_exc())
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    seconds = time.monotonic() - start
    stderr = err.getvalue()
    if status not in (0, 2, "timeout", "exception"):
        problems.append(f"exit status {status}")
    if status == 2:
        lines = stderr.splitlines()
        if len(lines) != 1 or not stderr.endswith("\n") or not lines[0].startswith("msfcnn: error: "):
            problems.append(f"error is not exactly one 'msfcnn: error:' line on stderr: {stderr!r}")
        if out.getvalue():
            problems.append(f"a user error also printed on stdout: {out.getvalue()[:200]!r}")
    elif status == 0 and any(not line.startswith("msfcnn: warning: ") for line in stderr.splitlines()):
        problems.append(f"success printed on stderr: {stderr[:500]!r}")  # only warnings may show
    problems += _check_outputs(case, status, work)
    if problems and save:  # the case's files and its command line, to reproduce it by hand
        kept = os.path.join(save, f"seed{seed}-case{index}")
        shutil.copytree(work, kept, dirs_exist_ok=True)
        Path(kept, "case.txt").write_text(f"msfcnn {' '.join(case.argv)}\n{case.how}\n{problems[0]}\n")
    shutil.rmtree(work, ignore_errors=True)
    return Result(index, case.kind, case.how, case.argv, status, problems, stderr, seconds)


def _check_outputs(case: Case, status, work: str) -> list[str]:
    problems = []
    for folder, folders, files in os.walk(work):
        for name in files + folders:
            if name.endswith(".tmp") or name.startswith(".msfcnn-staging-"):
                problems.append(f"temporary file left behind: {os.path.join(folder, name)}")
    if case.output is None or status == "timeout":
        return problems
    exists = os.path.exists(case.output)
    if status != 0:
        if exists and (case.output_kind != "dir" or case.argv[0] == "compile"):  # compile: all or nothing
            problems.append(f"error exit, but {case.output} was written")
        return problems
    if case.output_kind == "dir":
        return problems
    if not exists:
        problems.append(f"status 0 but no {case.output}")
    elif case.output_kind == "json":
        try:
            json.loads(Path(case.output).read_text())
        except ValueError as err:
            problems.append(f"{case.output} is not whole JSON: {err}")
    elif case.output_kind == "npy":
        try:
            np.load(case.output, allow_pickle=False)
        except Exception as err:  # noqa: BLE001
            problems.append(f"{case.output} does not load: {err}")
    return problems


# ---------------------------------------------------------------------------------------------
# Many cases: worker processes, each case under its own alarm, the parent as a backstop.

def _worker(task):
    return run_case(*task)


def _init_worker():
    os.environ.setdefault("MPLBACKEND", "Agg")
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _preload() -> None:
    """Import what the commands import, once, before the workers fork: each case's process then
    starts with it, instead of importing it again per case."""
    import importlib
    for name in ("msfcnn.cli", "msfcnn.pipeline", "msfcnn.report", "msfcnn.fit", "msfcnn.frontends.tflite",
                 "msfcnn.frontends.onnx", "msfcnn.codegen.emit", "msfcnn.codegen.build", "msfcnn.latency", "onnx"):
        try:
            importlib.import_module(name)
        except ImportError:  # onnx is optional
            pass


def run_cases(seed: int, indices, jobs: int = 1, time_limit: int = TIME_LIMIT, progress=None, save: str | None = None,
              builds: bool = True):
    """Results of the cases `indices` of `seed`, in order of completion; each case runs in a process
    of its own, forked from a worker pool, so that no case sees what an earlier one left behind.
    With `save`, each failing case's files go to save/seed<S>-case<I>/. Without `builds`, no case
    compiles C (fit, verify): the fast slice."""
    base = tempfile.mkdtemp(prefix="msfcnn-fuzz-")
    tasks = [(seed, i, base, time_limit, save, builds) for i in indices]
    backstop = 3 * max(time_limit, BUILD_TIME_LIMIT)
    _preload()
    try:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(max(1, jobs), initializer=_init_worker, maxtasksperchild=1) as pool:
            results = pool.imap_unordered(_worker, tasks, chunksize=1)
            for _ in tasks:
                try:  # the alarm stops Python code; this catches a case stuck where it cannot
                    result = results.next(timeout=backstop)
                except multiprocessing.TimeoutError:
                    raise RuntimeError(f"a worker hung for over {backstop} s (an uninterruptible case)")
                if progress:
                    progress(result)
                yield result
    finally:
        shutil.rmtree(base, ignore_errors=True)
