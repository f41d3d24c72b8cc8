"""The Python API (docs/python.md): `import msfcnn` gives the commands as functions, with typed
results and the command line's errors; the page's examples print what it shows."""

import doctest
import json
import re
from pathlib import Path

import pytest

import msfcnn
from msfcnn import pipeline
from support.cli import run_cli

DOCS = Path(__file__).resolve().parent.parent.parent / "docs"
RESNET8 = str(Path(__file__).resolve().parent.parent / "fixtures" / "models" / "resnet8.tflite")


def doc_examples(page: Path) -> str:
    """The page's ```pycon blocks, one after the other, as one doctest text."""
    return "\n".join(re.findall(r"```pycon\n(.*?)```", page.read_text(), re.S))


@pytest.mark.slow  # builds and runs C, and bounds the stack of fit's plans
def test_the_python_page_prints_what_it_shows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # compile writes its project here
    (tmp_path / "tests").symlink_to(DOCS.parent / "tests")  # the page names fixtures from the checkout's top
    test = doctest.DocTestParser().get_doctest(doc_examples(DOCS / "python.md"), {}, "docs/python.md",
                                               str(DOCS / "python.md"), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
    assert len(test.examples) >= 15


def test_plan_is_the_cli_s_plan(capsys):
    code, out, _ = run_cli(capsys, "plan", RESNET8, "--max-overhead", "1.2", "--json")
    cli = json.loads(out)
    plan = msfcnn.plan(RESNET8, max_overhead=1.2)
    assert isinstance(plan, msfcnn.Plan) and code == 0
    assert [(b["first"], b["last"], b["scheme"], b["rows"]) for b in cli["blocks"]] == [
        (b.first, b.last, b.scheme, b.rows) for b in plan.blocks]
    assert plan.peak_ram_bytes == cli["peak_ram_bytes"] and plan.macs == cli["macs"]


def test_run_is_bit_exact_with_the_unfused_network_in_the_planned_arena():
    result = msfcnn.run(RESNET8, max_ram="24kB")
    graph = msfcnn.load(RESNET8)
    x = msfcnn.api._input(graph, None, 0)
    assert isinstance(result, msfcnn.Run) and result.max_abs_diff_vs_unfused == 0.0
    assert result.measured_peak_ram_bytes <= result.plan.peak_ram_bytes <= 24000
    assert (result.output == pipeline.run_reference(graph, x)).all()


@pytest.mark.slow  # about 5 s of CPU a compile for a board (its stack bound), and it compiles twice
def test_compile_for_a_board_writes_what_the_cli_writes(tmp_path, capsys):
    """board= links the project as `compile --board` does: the board's RAM as the linker's RAM
    region and the plan's stack bound reserved in it, on the board's target."""
    code, _, _ = run_cli(capsys, "compile", "mcunet-vww5", "--board", "nucleo-f412zg", "-o", str(tmp_path / "cli"))
    project = msfcnn.compile("mcunet-vww5", tmp_path / "api", board="nucleo-f412zg")
    assert code == 0 and project.target == "cortex-m4"
    for name in ("Makefile", "model.c", "main.c"):
        assert (tmp_path / "api" / name).read_text() == (tmp_path / "cli" / name).read_text().replace(
            str(tmp_path / "cli"), str(tmp_path / "api")), name
    assert "__ram_size=0x40000" in (tmp_path / "api" / "Makefile").read_text()


def test_compile_of_several_models_writes_what_the_cli_writes(tmp_path, capsys):
    dscnn, chain = (str(Path(RESNET8).parent / name) for name in ("dscnn.tflite", "i16_chain.tflite"))
    code, _, _ = run_cli(capsys, "compile", dscnn, chain, "--max-overhead", "1.2", "-o", str(tmp_path / "cli"))
    library = msfcnn.compile([dscnn, chain], tmp_path / "api", max_overhead=1.2)
    assert code == 0 and isinstance(library, msfcnn.CompiledTogether) and len(library.plans) == 2
    written = sorted(p.relative_to(tmp_path / "cli") for p in (tmp_path / "cli").rglob("*") if p.is_file())
    assert written == sorted(p.relative_to(tmp_path / "api") for p in (tmp_path / "api").rglob("*") if p.is_file())
    for name in written:
        if name.name != "msfcnn-files.txt":  # (it names the folder)
            assert (tmp_path / "api" / name).read_text() == (tmp_path / "cli" / name).read_text(), name
    header = (tmp_path / "api" / "msfcnn_arena.h").read_text()
    assert f"#define MSFCNN_SHARED_ARENA_BYTES {library.shared_arena_bytes}\n" in header
    with pytest.raises(msfcnn.UserError, match="2 plans for 3 models"):
        msfcnn.compile([dscnn, chain, dscnn], tmp_path / "x", plan=[None, None])


@pytest.mark.parametrize("call,message", [
    (lambda: msfcnn.compile(RESNET8, "out", board="nucleo-f412zg", target="fe310"), "runs on target cortex-m4"),
    (lambda: msfcnn.verify(RESNET8, input_in_flash=True), "input_in_flash needs board"),
    (lambda: msfcnn.plan("mbv2-w035"), "did you mean 'mbv2-w0.35'"),
    (lambda: msfcnn.plan(RESNET8, max_ram="64KB"), "KB means 1024 B on a datasheet"),
    (lambda: msfcnn.plan(RESNET8, max_overhead=0.5), "must be >= 1"),
    (lambda: msfcnn.plan(RESNET8, objective="min-latency"), "needs target="),
    (lambda: msfcnn.run(RESNET8, max_rams=1), "unknown plan option 'max_rams'"),
    (lambda: msfcnn.run(RESNET8, plan=msfcnn.plan(RESNET8), max_ram=1), "either plan= or plan options"),
    (lambda: msfcnn.run(RESNET8, plan=msfcnn.plan("mcunet-vww5")), "do not cover ops"),
    (lambda: msfcnn.fit(RESNET8, "nucleo-f41zg"), "did you mean 'nucleo-f412zg'"),
    (lambda: msfcnn.fit(RESNET8, ram="64KiB"), "needs its RAM and the target"),
    (lambda: msfcnn.compile(RESNET8, "out", target="cortexm4"), "did you mean 'cortex-m4'"),
])
def test_bad_input_raises_the_cli_s_user_error(call, message):
    with pytest.raises(msfcnn.UserError, match=re.escape(message)):
        call()


def test_the_api_names_are_the_functions_not_the_modules_of_the_same_name():
    import msfcnn.fit  # noqa: F401  (the module; the package's attribute stays the function)
    import msfcnn.plan  # noqa: F401
    assert callable(msfcnn.plan) and callable(msfcnn.fit) and msfcnn.plan is msfcnn.api.plan
    from msfcnn.plan import Plan
    assert Plan is msfcnn.Plan
