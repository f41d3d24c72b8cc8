"""The support matrix (`msfcnn ops`, docs/operators.md): for each operator of each model format and
each element type the format reads, whether the importer takes it, the ops it becomes, their
numerics, how they fuse and the targets whose latency model has coefficients for their kernels.

Every answer comes from where the tools decide it: the frontends' tables (frontends/operators.py)
and the TFLite importer's own check (`operators.tflite_converted`), the op classes' declarations
(ops/base.py: elements, numerics, pattern, latency families) and the coefficient files of
latency/coefficients/, read when the matrix is made.

`python -m msfcnn.support --write docs/operators.md` regenerates the document.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Mapping

from .files import write_atomic
from .frontends.operators import FORMATS, OpClasses, reaching, tflite_converted
from .ir.elements import ELEMENT_TYPES, INT8
from .latency.model import LatencyModel, calibrated_targets, load
from .ops import ELEMENTS, Op, Pattern, op_classes
from .ops.loop_counts import KernelBuild
from .report import table

# The element types each format's importer reads: TFLite models of any of them (a uint8 kernel
# computes on the int8 values holding the same reals), ONNX tensors as float32, layer lists as int8.
FORMAT_ELEMENTS = {"tflite": ELEMENTS, "onnx": ("float32",), "layer_list": ("int8",)}
FORMAT_TITLES = {"tflite": "TFLite builtin operators (`.tflite`)", "onnx": "ONNX operators (`.onnx`, float32)",
                 "layer_list": "Layer-list layers (`.json` and the built-in models, int8)"}

IMPORTED, FOLDED, NO_KERNEL, NOT_CONVERTED = "yes", "folded", "no: no kernel", "no: not converted"

# What each fusion pattern (ops.base.Pattern) lets the planner do with an op (schedule/streaming.py).
PATTERN_MEANINGS = {
    Pattern.WINDOW: "an output row reads a window of input rows: streamed row by row or tile by tile with its "
                    "neighbours",
    Pattern.ELEMENTWISE: "an output value reads the same position of each input: streamed with its neighbours, "
                         "may write over its input",
    Pattern.REDUCE: "a map into a vector: accumulates the map a block streams, at the block's end",
    Pattern.VECTOR: "a whole vector, or a view of bytes: runs whole, or in a block's tail after a reduce",
    Pattern.OPAQUE: "needs its inputs whole: runs alone, never fused",
}


@dataclass(frozen=True)
class Row:
    """One operator of one format on one element type of its input."""

    format: str  # a key of frontends.operators.FORMATS
    operator: str  # the format's name: "CONV_2D", "Conv", "conv2d"
    element: str  # the element type of its first input
    imports: str  # IMPORTED, FOLDED (shape arithmetic or an edge conversion: no op), NO_KERNEL or NOT_CONVERTED
    kinds: tuple[str, ...]  # the op kinds it becomes on this element type
    numerics: tuple[str, ...]  # the numerics every one of those ops has kernels for
    fewer_numerics: bool  # some attribute values have kernels under fewer numerics (Op.refused_under)
    patterns: tuple[str, ...]  # how its ops fuse (Pattern values), of every form they take
    # target -> the latency families its kernels run there, and those without coefficients
    families: dict[str, tuple[str, ...]]
    missing: dict[str, tuple[str, ...]]

    @property
    def latency_targets(self) -> tuple[str, ...]:
        """The targets with coefficients for every kernel the operator's ops run."""
        return tuple(target for target, families in self.families.items() if families and not self.missing[target])

    def to_dict(self) -> dict:
        return {**asdict(self), "kinds": list(self.kinds), "numerics": list(self.numerics),
                "patterns": list(self.patterns), "latency_targets": list(self.latency_targets),
                "families": {t: list(f) for t, f in self.families.items()},
                "missing": {t: list(f) for t, f in self.missing.items()}}


def models() -> dict[str, LatencyModel]:
    """The latency model of every calibrated target, as the coefficient files hold them now."""
    return {target: load(target) for target in calibrated_targets()}


def matrix(latency: Mapping[str, LatencyModel]) -> list[Row]:
    """The rows of every format, operator and element type, given the targets' latency models."""
    rows, every_class = [], op_classes()
    for name, operators in FORMATS.items():
        for operator, classes in sorted(operators.items()):
            rows.extend(_row(name, operator, classes, element, latency, every_class)
                        for element in FORMAT_ELEMENTS[name])
    return rows


def _imports(format_name: str, operator: str, classes: OpClasses, element: str) -> str:
    """Whether the importer takes the operator on `element`, by the importer's own rule."""
    if format_name == "tflite":
        taken = operator in tflite_converted(element)
    else:  # the ONNX and layer-list importers take what an op of theirs has a kernel for
        taken = not classes or operator in reaching(element, {operator: classes})
    if taken:
        return IMPORTED if any(cls.supports(element) for cls in classes) else FOLDED
    return NOT_CONVERTED if any(cls.supports(element) for cls in classes) else NO_KERNEL


def _forms(classes: OpClasses, element: str, every_class: list[type[Op]]) -> list[type[Op]]:
    """The op classes an operator's ops may take on `element`: the frontend's, and their variants
    of the same kind (numerics variants, weight offsets) with a kernel for it."""
    return [cls for cls in every_class
            if cls.supports(element) and any(issubclass(cls, base) and cls.kind == base.kind for base in classes)]


def _row(format_name: str, operator: str, classes: OpClasses, element: str,
         latency: Mapping[str, LatencyModel], every_class: list[type[Op]]) -> Row:
    imports = _imports(format_name, operator, classes, element)
    made = [cls for cls in classes if cls.supports(element)] if imports == IMPORTED else []
    forms = _forms(tuple(made), element, every_class)
    numerics = tuple(n for n in made[0].numerics_for(element) if all(n in cls.numerics_for(element) for cls in made)) \
        if made else ()
    families = {target: _families(forms, element, model.dsp, model.mve) for target, model in latency.items()}
    missing = {target: tuple(f for f in families[target] if not model.has_costs(f))
               for target, model in latency.items()}
    return Row(format_name, operator, element, imports, tuple(sorted({cls.kind for cls in made})), numerics,
               any(cls.refused_under is not Op.refused_under for cls in made),
               tuple(p.value for p in Pattern if any(cls.pattern is p for cls in forms)), families, missing)


def _families(forms: list[type[Op]], element: str, dsp: bool, mve: bool = False) -> tuple[str, ...]:
    """The latency families (`family:loop` counts, latency/features.py) the forms' kernels run on a
    target: a float32 kernel's carry "_f32" and never take the DSP loops; an op without a kernel
    (a view) costs a memmove."""
    kernel_element = ELEMENT_TYPES.get(element, INT8)  # uint8 kernels compute on int8 values
    suffix = "_f32" if kernel_element.is_float else ""
    found = set()
    for cls in forms:
        if cls.c_kernel is None:
            found.add("memmove")
        else:
            dsp_loops = dsp and not kernel_element.is_float
            build = KernelBuild(element if element == "uint8" else kernel_element.name, dsp_loops,
                                mve and dsp_loops and element in ("int8", "uint8"))
            found.update(f + suffix for f in cls.latency_families(build))
    return tuple(sorted(found))


# ---- rendering ----------------------------------------------------------------------------------
HEADERS = ["operator", "type", "imports", "op kinds", "numerics", "fuses as", "latency coefficients"]


def _cells(row: Row, targets: list[str]) -> list[str]:
    if row.imports != IMPORTED:
        return [row.operator, row.element, row.imports, "-", "-", "-", "-"]
    numerics = ", ".join(row.numerics) + (" (not every form)" if row.fewer_numerics else "")
    return [row.operator, row.element, row.imports, ", ".join(row.kinds), numerics, ", ".join(row.patterns),
            _latency_cell(row, targets)]


def _latency_cell(row: Row, targets: list[str]) -> str:
    """The targets with coefficients for all of the row's kernels ("all" when every calibrated
    target has them), then those with some, and which they lack."""
    def named(group: list[str]) -> str:
        return "all" if group == targets else ", ".join(group)

    full = list(row.latency_targets)
    parts = [named(full)] if full else []
    partial: dict[tuple[str, ...], list[str]] = {}
    for target in targets:
        if row.missing[target] and len(row.missing[target]) < len(row.families[target]):
            partial.setdefault(row.missing[target], []).append(target)
    parts += [f"{named(group)} without {', '.join(missing)}" for missing, group in partial.items()]
    return "; ".join(parts) or "none"


def _by_format(rows: list[Row]) -> dict[str, list[Row]]:
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row.format, []).append(row)
    return grouped


def _targets(rows: list[Row]) -> list[str]:
    return list(rows[0].families) if rows else []


def render_text(rows: list[Row]) -> str:
    """Aligned tables for the terminal, one per format."""
    targets = _targets(rows)
    parts = [f"calibrated targets: {', '.join(targets) or 'none'}"]
    for name, group in _by_format(rows).items():
        parts.append(f"{FORMAT_TITLES[name].replace('`', '')}\n" + table(HEADERS, [_cells(r, targets) for r in group]))
    width = max(len(p.value) for p in Pattern)
    parts.append("fusion patterns:\n" + "\n".join(f"  {p.value:{width}}  {PATTERN_MEANINGS[p]}" for p in Pattern))
    return "\n\n".join(parts) + "\n"


INTRO = """\
# Operators

Which operators msfcnn imports, per model format and element type, what they become, how they
fuse and on which targets their time is predicted. `msfcnn ops` prints the same tables, and
`msfcnn ops --json` the same rows as JSON. This page is generated by
`python -m msfcnn.support --write docs/operators.md`; a test fails when it is stale.

Each row is one operator of one format on one element type of its first input:

- **imports**: `yes`, or `folded` when the importer folds the operator away (shape arithmetic, a
  16x8 model's float32 edges). A refusal says whether no op has a kernel for the type, or the
  converter does not build that form.
- **op kinds**: the msfcnn ops the operator becomes (src/msfcnn/ops/).
- **numerics**: whose kernels the generated code can match bit for bit (`--numerics`). TFLite
  Micro runs no uint8 model. "Not every form" means some attribute values have fewer.
- **fuses as**: the fusion pattern of every form its ops take (below). Two patterns mean that some
  forms fuse and others do not.
- **latency coefficients**: the targets whose latency model has fitted costs for every kernel the
  operator runs. "Without" names the kernel families a target lacks; their time is predicted as
  zero.
"""


def render_markdown(rows: list[Row]) -> str:
    """docs/operators.md: the intro, the fusion patterns and one table per format."""
    targets = _targets(rows)
    parts = [INTRO, f"Calibrated targets: {', '.join(f'`{t}`' for t in targets) or 'none'}.\n",
             "## Fusion patterns\n\n| pattern | what fusion may do |\n|---|---|\n"
             + "".join(f"| `{p.value}` | {PATTERN_MEANINGS[p]} |\n" for p in Pattern)]
    for name, group in _by_format(rows).items():
        lines = [f"## {FORMAT_TITLES[name]}\n", "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
        lines += ["| " + " | ".join(_md_cell(i, c) for i, c in enumerate(_cells(r, targets))) + " |" for r in group]
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def _md_cell(index: int, text: str) -> str:
    return f"`{text}`" if index == 0 else text


def to_dict(rows: list[Row]) -> dict:
    """The JSON form of `msfcnn ops --json`."""
    return {"targets": _targets(rows), "patterns": {p.value: PATTERN_MEANINGS[p] for p in Pattern},
            "operators": [row.to_dict() for row in rows]}


def ops_command(json_output: bool) -> str:
    """`msfcnn ops [--json]`: the matrix as text, or as JSON."""
    rows = matrix(models())
    return json.dumps(to_dict(rows), indent=1) + "\n" if json_output else render_text(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m msfcnn.support", description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="PATH", help="write the Markdown page (docs/operators.md) there")
    args = parser.parse_args(argv)
    text = render_markdown(matrix(models()))
    if args.write:
        write_atomic(Path(args.write), text)
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
