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


def test_other_commands_let_a_bug_surface(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(name: str) -> object:
        raise ImportError("simulated broken install")

    monkeypatch.setattr(cli.importlib, "import_module", broken)
    with pytest.raises(ImportError):
        cli.main(["check", "x.yaml"])
