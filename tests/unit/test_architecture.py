"""The architecture's rules, checked on the source (docs/architecture.md, "Layers"):

* the import graph of src/msfcnn (module-level and function-level imports alike) has no cycle,
  and no module imports one of a higher layer;
* the code that plans, lowers, costs, emits and runs blocks never decides by an operator's kind
  or class: what differs between operators is the operator's to say (ops/base.py's Op).
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import msfcnn
import msfcnn.ops
from msfcnn.ops import Op

SRC = Path(msfcnn.__file__).parent

# Lowest first: a module may import modules of its own layer or of lower ones. The first part of a
# module's name below msfcnn names its layer ("" is the package itself, which holds the version).
LAYERS = [
    ["errors", "models", "version"],  # models: the built-in models' JSON files, read as package data
    ["sizes", "jsontext", "files", "progress", "numerics", "targets", "boards"],
    ["ops"],  # operators: attributes, shapes, numpy kernels, C kernel contract, loop counts
    ["ir"],  # the graph of ops
    ["fusion", "tensors", "executor", "frontends"],
    ["schedule", "plan"],
    ["cost", "fused_executor", "codegen", "latency"],
    ["planner", "report", "support"],  # support: the support matrix (msfcnn ops), a report on the ops
    ["pipeline", "windows"],  # windows: a streaming model run window by window (--streaming)
    ["fit", "together"],
    ["api", ""],  # "": the package itself, which re-exports the Python API (api.py)
    ["cli", "__main__"],
]

# Where blocks are planned, lowered, costed, emitted and run: no operator kind or class here.
OP_BLIND = ["latency", "schedule", "codegen", "cost", "executor.py", "fused_executor.py"]


def _modules() -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, whether it is a package's __init__)."""
    modules = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if package else parts)] = (path, package)
    return modules


MODULES = _modules()


def _imported(module: str, package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The msfcnn modules an import statement of `module` imports (a name imported from a package
    counts as its submodule when there is one, else as the package)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split(".")[0] == "msfcnn"]
    if node.level:
        base = module.split(".") if package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    if source.split(".")[0] != "msfcnn":
        return []
    return [f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source for alias in node.names]


def import_graph() -> dict[str, set[str]]:
    """Module -> the msfcnn modules it imports anywhere in its file."""
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for module, (path, package) in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[module].update(t for t in _imported(module, package, node) if t != module)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def layer_of(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for level, names in enumerate(LAYERS):
        if top in names:
            return level
    raise AssertionError(f"{module} is in no layer: place msfcnn.{top} in LAYERS (and docs/architecture.md)")


def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)


def test_the_import_graph_has_no_cycle():
    assert cycles(import_graph()) == []


def test_no_module_imports_a_higher_layer():
    upward = sorted(f"{a} imports {b}" for a, targets in import_graph().items() for b in targets
                    if layer_of(b) > layer_of(a))
    assert upward == []


def test_the_checks_see_a_cycle_and_the_imports_inside_functions():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    graph = import_graph()
    assert "msfcnn.pipeline" in graph["msfcnn.cli"]  # imported inside the commands' functions only
    assert "msfcnn.ops.base" in graph["msfcnn.ops.add"] and "msfcnn.numerics" in graph["msfcnn.ops.base"]


# ---- no operator kind or class where blocks are handled ----------------------------------------
def _op_classes() -> dict[str, type]:
    for info in pkgutil.iter_modules(msfcnn.ops.__path__):
        importlib.import_module(f"msfcnn.ops.{info.name}")
    found, todo = {}, [Op]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            found[sub.__name__] = sub
            todo.append(sub)
    return found


OP_CLASSES = _op_classes()
OP_KINDS = {cls.kind for cls in OP_CLASSES.values() if isinstance(cls.__dict__.get("kind"), str)}


def _blind_files() -> list[Path]:
    files = []
    for name in OP_BLIND:
        path = SRC / name
        assert path.exists(), f"{path} is gone: update OP_BLIND"
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


def _is_kind(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "kind"


def _kind_literals(node: ast.AST) -> list[str]:
    """The operator kinds written as string literals in a compared expression (or a tuple of them)."""
    values = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [v.value for v in values if isinstance(v, ast.Constant) and v.value in OP_KINDS]


def kind_decisions(tree: ast.AST) -> list[str]:
    """Where the code decides by an operator's kind: a comparison with `.kind` or with a kind's
    string, a table keyed by kinds, a look-up by `.kind`."""
    found = []
    for node in ast.walk(tree):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_is_kind(o) for o in operands):
                found.append(f"{where}: compares .kind")
            found += [f"{where}: compares with the kind {k!r}" for o in operands for k in _kind_literals(o)]
        elif isinstance(node, ast.Dict):
            found += [f"{where}: a table keyed by the kind {k!r}" for key in node.keys if key is not None
                      for k in _kind_literals(key)]
        elif isinstance(node, ast.Subscript) and _is_kind(node.slice):
            found.append(f"{where}: looks up .kind")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args and _is_kind(node.args[0]):
            found.append(f"{where}: looks up .kind")
    return found


def op_class_uses(tree: ast.AST) -> list[str]:
    """Operator classes imported, or reached as an attribute of a module (ops.Conv2D)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and "ops" in node.module.split("."):
            found += [f"line {node.lineno}: imports {a.name}" for a in node.names if a.name in OP_CLASSES]
        elif isinstance(node, ast.Attribute) and node.attr in OP_CLASSES and isinstance(node.value, ast.Name) \
                and node.value.id in ("ops", "msfcnn"):
            found.append(f"line {node.lineno}: uses {node.attr}")
    return found


def test_blocks_are_handled_without_asking_an_operator_kind():
    found = [f"{path.relative_to(SRC)} {what}" for path in _blind_files()
             for what in kind_decisions(ast.parse(path.read_text(), str(path)))]
    assert found == []


def test_blocks_are_handled_without_naming_an_operator_class():
    found = [f"{path.relative_to(SRC)} {what}" for path in _blind_files()
             for what in op_class_uses(ast.parse(path.read_text(), str(path)))]
    assert found == []


def test_the_checks_see_kinds_and_op_classes():
    assert {"conv2d", "depthwise_conv2d", "dense", "add"} <= OP_KINDS
    code = ast.parse('if op.kind == "dense": pass\n'
                     'batched = kind in ("max_pool2d", "avg_pool2d")\n'
                     'TABLE = {"pad": 1}\n'
                     'f = COUNTS.get(op.kind)\n'
                     'message = f"{op.kind} has no kernel"\n')
    assert kind_decisions(code) == [  # the f-string's .kind is no decision
        "line 1: compares .kind", "line 1: compares with the kind 'dense'",
        "line 2: compares with the kind 'max_pool2d'", "line 2: compares with the kind 'avg_pool2d'",
        "line 3: a table keyed by the kind 'pad'", "line 4: looks up .kind"]
    assert op_class_uses(ast.parse("from ..ops import Conv2D, Pattern\nfrom ..ops.depthwise_conv2d_litert import "
                                   "DepthwiseConv2DLitert\n")) == ["line 1: imports Conv2D",
                                                                   "line 2: imports DepthwiseConv2DLitert"]


def test_every_kernel_a_header_declares_is_defined_beside_it():
    """compile writes the <op>.c beside the <op>.h that declares a kernel (emit.project_kernels): a
    kernel defined in another source would be missing from the projects that call it."""
    import re

    from msfcnn.codegen import emit
    library = emit.kernel_sources()
    misplaced = [(header, name) for header, text in emit._kernel_headers().items()
                 for name in emit._EXTERNAL.findall(text)
                 if not re.search(rf"\b{name}\b", library.get(header[:-2] + ".c", ""))]
    assert misplaced == []
