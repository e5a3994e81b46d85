"""The dispatcher: usage, unknown commands, and the hook command failing closed on any error."""

from __future__ import annotations

import pytest
from dsh_policy.policy import cli


def test_no_arguments_prints_usage_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    assert "usage: dsh-policy" in capsys.readouterr().out


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    assert "verify" in capsys.readouterr().out


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_a_hook_that_cannot_even_import_blocks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(name: str) -> object:
        raise ImportError("simulated broken install")

    monkeypatch.setattr(cli.importlib, "import_module", broken)
    assert cli.main(["hook", "claude-code", "--pack", "x.yaml"]) == 2
    assert "internal error, refusing" in capsys.readouterr().err


def test_other_commands_report_a_bug_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No input makes a command print a traceback; a bug is one line and exit 2."""

    def broken(name: str) -> object:
        raise ImportError("simulated broken install")

    monkeypatch.setattr(cli.importlib, "import_module", broken)
    assert cli.main(["check", "x.yaml"]) == 2
    err = capsys.readouterr().err
    assert err == "dsh-policy check: internal error: ImportError: simulated broken install\n"


def test_a_bug_surfaces_with_its_traceback_when_debugging(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(name: str) -> object:
        raise ImportError("simulated broken install")

    monkeypatch.setattr(cli.importlib, "import_module", broken)
    monkeypatch.setenv("DSH_POLICY_LOG", "debug")
    with pytest.raises(ImportError):
        cli.main(["check", "x.yaml"])


def test_memory_exhaustion_is_one_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def exhausted(name: str) -> object:
        raise MemoryError

    monkeypatch.setattr(cli.importlib, "import_module", exhausted)
    assert cli.main(["check", "x.yaml"]) == 2
    assert "too large" in capsys.readouterr().err
