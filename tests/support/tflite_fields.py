"""Field-aware edits of a `.tflite` file, in place: a scalar field of a table (an option, a tensor's
type or buffer index, an operator's opcode index) or an element of a vector (a shape dimension, a
scale, a zero point, an operator's input) is overwritten where the file stores it. Only fields the
file holds can be edited (a field left at its default has no bytes), which keeps the file's layout
and lets a test or the fuzz harness set any value, also ones no converter would write.

Positions are found with the reader classes of the `tflite` package: a field's vtable slot is read
from its accessor's source (`self._tab.Offset(N)`), the way the generated code finds it.
"""

from __future__ import annotations

import inspect
import re
import struct
from dataclasses import dataclass
from functools import lru_cache

import tflite as schema

# flatbuffers number flags by name, as the generated accessors name them -> struct format
_FORMATS = {"Int8Flags": "<b", "Uint8Flags": "<B", "Int16Flags": "<h", "Uint16Flags": "<H", "Int32Flags": "<i",
            "Uint32Flags": "<I", "Int64Flags": "<q", "Uint64Flags": "<Q", "Float32Flags": "<f",
            "Float64Flags": "<d", "BoolFlags": "<?"}


@lru_cache(maxsize=None)
def _slot(cls: type, field: str) -> tuple[int, str]:
    """(vtable slot, struct format) of `cls.field` from its generated accessor."""
    source = inspect.getsource(getattr(cls, field))
    slot = int(re.search(r"self\._tab\.Offset\((\d+)\)", source).group(1))
    flags = re.findall(r"number_types\.(\w+Flags)", source)
    element = next((f for f in flags if f != "UOffsetTFlags"), "UOffsetTFlags")
    return slot, _FORMATS.get(element, "<I")


@dataclass(frozen=True)
class Field:
    """Where one value lives in the file: byte position and struct format; `what` names it."""
    position: int
    fmt: str
    what: str

    def read(self, data: bytes):
        return struct.unpack_from(self.fmt, data, self.position)[0]

    def write(self, data: bytearray, value) -> None:
        struct.pack_into(self.fmt, data, self.position, value)


def scalar(table, field: str, what: str = "") -> Field | None:
    """A scalar field of a reader object (`schema.Pool2DOptions`, `schema.Tensor`, ...), if stored."""
    slot, fmt = _slot(type(table), field)
    offset = table._tab.Offset(slot)
    return Field(table._tab.Pos + offset, fmt, what or field) if offset else None


def elements(table, field: str, what: str = "") -> list[Field]:
    """Every element of a vector field of scalars (`Shape`, `Scale`, `ZeroPoint`, `Inputs`, ...)."""
    slot, fmt = _slot(type(table), field)
    offset = table._tab.Offset(slot)
    if not offset:
        return []
    start, size = table._tab.Vector(offset), struct.calcsize(fmt)
    return [Field(start + j * size, fmt, f"{what or field}[{j}]") for j in range(table._tab.VectorLen(offset))]


# numpy-free struct formats of the tensor types a buffer may hold, by schema.TensorType code
_BUFFER_FORMATS = {schema.TensorType.INT8: "<b", schema.TensorType.UINT8: "<B", schema.TensorType.INT16: "<h",
                   schema.TensorType.INT32: "<i", schema.TensorType.INT64: "<q", schema.TensorType.FLOAT32: "<f"}


def tensor_values(data: bytes, index: int) -> list[Field]:
    """Every value a constant tensor stores in its buffer (weights, biases), or [] if none."""
    model = schema.Model.GetRootAs(data, 0)
    tensor = model.Subgraphs(0).Tensors(index)
    fmt = _BUFFER_FORMATS.get(tensor.Type())
    buffer = model.Buffers(tensor.Buffer())
    offset = buffer._tab.Offset(_slot(schema.Buffer, "Data")[0])
    if fmt is None or not offset:
        return []
    start, size = buffer._tab.Vector(offset), struct.calcsize(fmt)
    count = buffer._tab.VectorLen(offset) // size
    return [Field(start + j * size, fmt, f"tensor {index} value[{j}]") for j in range(count)]


def options(operator, cls: type):
    """An operator's builtin options as `cls` (e.g. `schema.Pool2DOptions`), or None."""
    table = operator.BuiltinOptions()
    if table is None:
        return None
    typed = cls()
    typed.Init(table.Bytes, table.Pos)
    return typed


# The options class of each BuiltinOptions union tag, for the fields of any operator's options.
OPTIONS_CLASSES = {code: getattr(schema, name) for name, code in vars(schema.BuiltinOptions).items()
                   if not name.startswith("_") and hasattr(schema, name)}


def all_fields(data: bytes) -> list[Field]:
    """Every scalar and scalar-vector field the model's first subgraph stores: tensors (type,
    buffer, shape, quantisation), operators (opcode, inputs, outputs, every option) and the opcodes
    (builtin codes)."""
    model = schema.Model.GetRootAs(data, 0)
    fields = []
    for k in range(model.OperatorCodesLength()):
        code = model.OperatorCodes(k)
        for name in ("DeprecatedBuiltinCode", "BuiltinCode", "Version"):
            fields.append(scalar(code, name, f"opcode {k} {name}"))
    sub = model.Subgraphs(0)
    fields += elements(sub, "Inputs", "subgraph inputs") + elements(sub, "Outputs", "subgraph outputs")
    for t in range(sub.TensorsLength()):
        tensor = sub.Tensors(t)
        fields += [scalar(tensor, "Type", f"tensor {t} type"), scalar(tensor, "Buffer", f"tensor {t} buffer")]
        fields += elements(tensor, "Shape", f"tensor {t} shape")
        q = tensor.Quantization()
        if q is not None:
            fields += elements(q, "Scale", f"tensor {t} scale") + elements(q, "ZeroPoint", f"tensor {t} zero point")
            fields.append(scalar(q, "QuantizedDimension", f"tensor {t} quantized dimension"))
    for i in range(sub.OperatorsLength()):
        op = sub.Operators(i)
        fields += [scalar(op, "OpcodeIndex", f"operator {i} opcode index")]
        fields += elements(op, "Inputs", f"operator {i} inputs") + elements(op, "Outputs", f"operator {i} outputs")
        cls = OPTIONS_CLASSES.get(op.BuiltinOptionsType())
        typed = options(op, cls) if cls else None
        if typed is not None:
            for name in _scalar_accessors(cls):
                fields.append(scalar(typed, name, f"operator {i} {cls.__name__}.{name}"))
    return [f for f in fields if f is not None]


@lru_cache(maxsize=None)
def _scalar_accessors(cls: type) -> tuple[str, ...]:
    """The accessors of an options class that read one stored scalar (no vectors, no tables)."""
    names = []
    for name, member in vars(cls).items():
        if name.startswith("_") or not callable(member) or name in ("Init",):
            continue
        try:
            source = inspect.getsource(member)
        except (OSError, TypeError):
            continue
        if "self._tab.Offset(" in source and "self._tab.Get(" in source and "Vector" not in source \
                and len(inspect.signature(member).parameters) == 1:
            names.append(name)
    return tuple(names)


def patched(data: bytes, edits: list[tuple[Field, object]]) -> bytes:
    """`data` with each field set to its value."""
    out = bytearray(data)
    for field, value in edits:
        field.write(out, value)
    return bytes(out)
