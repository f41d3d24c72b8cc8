"""The command line turns the parsed arguments into a typed request and never writes to them
(issue 23): every command reads its request only."""

import ast
import dataclasses
from pathlib import Path

import pytest

import msfcnn.cli as cli
from msfcnn.cli import COMMANDS, build_parser

CLI_SOURCE = Path(cli.__file__).read_text()


def namespace_writes(source: str) -> list[str]:
    """Where `source` writes to, or reads back through getattr/vars, the parsed namespace: the
    names bound to `parse_args(...)` and every parameter called `args`."""
    tree = ast.parse(source)
    names = {"args"} | {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
                        and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
                        and node.value.func.attr == "parse_args"
                        for target in node.targets if isinstance(target, ast.Name)}
    found = []
    for node in ast.walk(tree):
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else
                   node.targets if isinstance(node, ast.Delete) else [])
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id in names:
                    found.append(f"line {node.lineno}: {ast.unparse(target)}")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("setattr", "delattr", "getattr", "vars") and node.args
                and isinstance(node.args[0], ast.Name) and node.args[0].id in names):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_the_check_finds_every_kind_of_write():
    source = ("def f(args):\n    args.target = 1\n    args.n += 1\n    args.x: int = 2\n    setattr(args, 'a', 1)\n"
              "    getattr(args, 'b', None)\n    del args.c\n"
              "def g():\n    ns = parser.parse_args()\n    ns.board = None\n    other.target = 1\n")
    assert sorted(int(f.split(":")[0].split()[1]) for f in namespace_writes(source)) == [2, 3, 4, 5, 6, 7, 10]


def test_cli_never_writes_to_the_parsed_arguments():
    assert namespace_writes(CLI_SOURCE) == []


ARGUMENTS = {"models": ["models"], "ops": ["ops"], "plan": ["plan", "m"], "sweep": ["sweep", "m"], "pareto": ["pareto", "m"],
             "run": ["run", "m"], "compile": ["compile", "m", "-o", "d"], "verify": ["verify", "m"],
             "fit": ["fit", "m", "--board", "nucleo-f767zi"]}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_builds_a_frozen_request_and_leaves_the_arguments_alone(command):
    args = build_parser().parse_args(ARGUMENTS[command])
    before = dict(vars(args))
    build, _ = COMMANDS[command]
    request = build(args)
    assert vars(args) == before
    assert dataclasses.is_dataclass(request) and request.call.reads == (() if command in ("models", "ops") else ("m",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.call = None


def test_a_board_gives_its_target_and_clock_to_the_request():
    """What `_link_target` used to write back into args.target: the board's target, which then
    weighs a time objective."""
    build, _ = COMMANDS["verify"]
    request = build(build_parser().parse_args(["verify", "m", "--board", "nucleo-f767zi",
                                               "--objective", "min-latency"]))
    assert request.link.target.name == request.link.board.target == "cortex-m7"
    assert request.model.options.latency_target == "cortex-m7"
    request = build(build_parser().parse_args(["verify", "m", "--objective", "min-latency"]))
    assert request.link.board is None and request.model.options.latency_target == "host"
    build, _ = COMMANDS["plan"]
    request = build(build_parser().parse_args(["plan", "m", "--board", "nucleo-f767zi", "--max-latency", "300ms"]))
    assert request.options.latency_target == "cortex-m7" and request.options.clock_hz == 216_000_000
    assert request.options.instruction_cap() == 300 * 216_000


@pytest.mark.parametrize("argv, message", [
    (["plan", "m", "--board", "nucleo-f767zi", "--target", "cortex-m4"], "runs on target cortex-m7"),
    (["plan", "m", "--objective", "min-latency"], "needs --target"),
    (["pareto", "m", "--axis", "latency"], "needs --target"),
    (["verify", "m", "--input-in-flash"], "--input-in-flash needs --board"),
    (["compile", "m", "-o", "d", "--prefix", "9x"], "9x"),
    (["sweep", "m", "--max-overhead", "0.5"], "0.5"),
    (["fit", "m", "--board", "nosuch"], "unknown board"),
])
def test_requests_refuse_bad_arguments_before_any_work(argv, message):
    build, _ = COMMANDS[argv[0]]
    with pytest.raises(cli.UserError, match=message):
        build(build_parser().parse_args(argv))


@pytest.mark.parametrize("argv", [["compile", "{m}", "--input-in-flash", "-o", "{m}"],
                                  ["plan", "{m}", "--board", "nosuch", "-o", "{m}"],
                                  ["sweep", "{m}", "--max-ram", "1KB", "--json"]])
def test_an_output_over_an_input_is_refused_before_any_other_check(tmp_path, capsys, argv):
    """As before requests: the first error is the output that would replace the model file."""
    model = tmp_path / "m.json"
    model.write_text('{"input": [8, 8, 1], "layers": [{"op": "relu"}]}')
    code = cli.main([a.format(m=model) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    if "-o" in argv:
        assert "is the command's input: refusing to write over it" in err, err
    else:  # sweep writes nothing: its own check speaks
        assert "bad size '1KB'" in err, err


@pytest.mark.slow  # fast-tier budget: about 2 s of CPU
def test_ops_prints_the_support_matrix(capsys):
    """`msfcnn ops [--json]`: the matrix support.py makes (docs/operators.md's rows)."""
    import json

    from msfcnn import support
    assert cli.main(["ops", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == json.loads(support.ops_command(json_output=True)) and doc["operators"]
    assert cli.main(["ops", "-q"]) == 0
    out = capsys.readouterr().out
    assert out == support.ops_command(json_output=False).rstrip("\n") + "\n" and "CONV_2D" in out
