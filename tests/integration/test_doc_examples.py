"""The examples of docs/*.md that show what `msfcnn` prints are run, and print that (docs/README.md:
"`...` marks output left out"). A line of only `...` stands for any lines, `...` inside a line for
any text. Examples that name a file the repository does not hold are listed in NOT_RUN, each
with why; a test checks that list too, so that it cannot hide a runnable example."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from msfcnn.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
BLOCK = re.compile(r"```[a-z]*\n(.*?)```", re.S)
# Examples whose commands build C for an emulated core (QEMU) or count instructions, and the
# slow ones (over ~5 s on 2 busy cores).
QEMU_WORDS = ("--target fe310", "--target esp32c3", "--target cortex-m", "--instructions", "--board")
SLOW_WORDS = ("verify", "sweep", "pareto", "compile", "mcunet-320kb", "fit")


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    steps: tuple[tuple[str, tuple[str, ...]], ...]  # (command, the lines shown after it)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def examples() -> list[Example]:
    """Every fenced block of docs/*.md that runs `msfcnn` and shows some output."""
    found = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        text = page.read_text()
        for match in BLOCK.finditer(text):
            steps, lines = [], match.group(1).splitlines()
            for line in lines:
                if line.startswith("$ "):
                    steps.append((line[2:], []))
                elif steps:
                    steps[-1][1].append(line)
            if steps and all(c.startswith("msfcnn ") for c, _ in steps) and any(shown for _, shown in steps):
                found.append(Example(f"docs/{page.name}", text[:match.start()].count("\n") + 1,
                                     tuple((c, tuple(shown)) for c, shown in steps)))
    return found


# Examples that name files the repository does not hold (illustrations of an error on a user's
# file): page:line -> why.
NOT_RUN = {
    "docs/cli.md:123": "model.json is a user's layer list with a 9x9 kernel on an 8x8 input (not in the repository)",
    "docs/models.md:244": "log_softmax.tflite, relu_n1_to_1.tflite, dilated.tflite: illustrations, not fixtures",
    "docs/models.md:540": "softsign.onnx: an illustration, not a fixture",
    "docs/cli.md:349": "frames.npy is a user's sequence of 50 frames (not in the repository)",
}


def _fixture(word: str) -> Path | None:
    """A bare file name of an example, as a fixture of tests/fixtures (its folders searched)."""
    if "/" in word or not re.search(r"\.(tflite|onnx|json|npy|npz)$", word):
        return None
    hits = sorted(FIXTURES.rglob(word))
    return hits[0] if hits else None


def _matches(shown: list[str], printed: list[str]) -> bool:
    """`printed` has the lines `shown`, where a `...` line stands for any lines (none or more) and
    `...` inside a line for any text."""
    if not shown:
        return not printed
    head, rest = shown[0], shown[1:]
    if head.strip() == "...":
        return any(_matches(rest, printed[k:]) for k in range(len(printed) + 1))
    pattern = ".*".join(re.escape(part) for part in head.rstrip().split("..."))
    return bool(printed) and re.fullmatch(pattern, printed[0].rstrip()) is not None and _matches(rest, printed[1:])


def _run(command: str, folder: Path) -> list[str]:
    """The lines `msfcnn` prints for the command (stdout, then stderr), run in `folder`."""
    words = shlex.split(command)[1:]
    for word in words:  # a fixture named bare, as a user names the file in their folder
        fixture = _fixture(word)
        if fixture is not None and not (folder / word).exists():
            (folder / word).symlink_to(fixture)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.chdir(folder):
        main(words)
    lines = (out.getvalue() + err.getvalue()).splitlines()
    while lines and not lines[-1].strip():  # a trailing blank line is not shown
        lines.pop()
    return lines


def _params():
    for example in examples():
        commands = " ".join(c for c, _ in example.steps)
        marks = [pytest.mark.qemu] if any(w in commands for w in QEMU_WORDS) else []
        marks += [pytest.mark.slow] if any(w in commands for w in SLOW_WORDS) else []
        if example.id not in NOT_RUN:
            yield pytest.param(example, id=example.id, marks=marks)


@pytest.mark.parametrize("example", list(_params()))
def test_a_doc_example_prints_what_it_shows(example, tmp_path):
    (tmp_path / "tests").symlink_to(ROOT / "tests")  # the examples' paths are the checkout's
    for command, shown in example.steps:
        printed = _run(command, tmp_path)
        if not shown:  # a command shown without its output (it prepares the next one)
            continue
        assert _matches(list(shown), printed), (
            f"{example.id}: `{command}` printed:\n" + "\n".join(printed) + "\n-- the page shows:\n" + "\n".join(shown))


def test_not_run_lists_only_examples_that_name_missing_files():
    by_id = {e.id: e for e in examples()}
    for where in NOT_RUN:
        assert where in by_id, f"{where}: no such example (the page moved: update NOT_RUN)"
        words = [w for c, _ in by_id[where].steps for w in shlex.split(c)]
        files = [w for w in words if re.search(r"\.(tflite|onnx|json|npy|npz)$", w) and not w.startswith("-")]
        assert any(not (ROOT / w).exists() and _fixture(w) is None for w in files), where


def test_the_matcher_templates_what_it_should():
    assert _matches(["a", "...", "d"], ["a", "b", "c", "d"]) and _matches(["a", "..."], ["a"])
    assert _matches(["x ... z"], ["x 123 z"]) and not _matches(["x ... z"], ["x 123 y"])
    assert not _matches(["a", "d"], ["a", "b", "d"]) and not _matches(["a"], ["a", "b"])
