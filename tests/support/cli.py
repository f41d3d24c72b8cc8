"""The command line in-process: `msfcnn.cli.main` on an argument list, with its output captured."""

from __future__ import annotations

from msfcnn.cli import main


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `msfcnn ARGV...`, under pytest's capsys fixture."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
