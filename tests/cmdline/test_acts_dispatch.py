"""``shell.acts`` calls each per-command reader only for the programs it declares
(``COMMAND_READERS`` of each effects module, gathered in ``acts.COMMAND_READERS``). These tests keep
the dispatch honest: no module's reader is left out of the gathered table, the dispatch for a
program is exactly the readers whose declarations take it, and on every command of the packs'
cases and of the dangerous corpora a reader finds nothing in a command its declaration leaves out
(so dispatching drops no effect a reader would have found)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
import yaml
from dsh_policy.cmdline import effects
from dsh_policy.cmdline.effects import acts
from dsh_policy.cmdline.effects.model import runs
from dsh_policy.cmdline.shell import ShellLineTooComplexError, shell_commands

ROOT = Path(__file__).resolve().parents[2]


def _modules_with_readers() -> Iterator[object]:
    for info in pkgutil.iter_modules(effects.__path__):
        module = importlib.import_module(f"{effects.__name__}.{info.name}")
        if info.name != "acts" and hasattr(module, "COMMAND_READERS"):
            yield module


def test_every_module_reader_is_dispatched_with_its_own_declaration() -> None:
    gathered = list(acts.COMMAND_READERS)
    modules = list(_modules_with_readers())
    assert len(modules) >= 15
    for module in modules:
        for entry in module.COMMAND_READERS:  # type: ignore[attr-defined]
            assert entry in gathered, f"{module.__name__}: {entry[1].__name__} is not dispatched"


def test_no_reader_is_gathered_twice() -> None:
    readers = [reader for _, reader in acts.COMMAND_READERS]
    assert len(readers) == len(set(readers))


def _declared_names() -> set[str]:
    names = {"ls", "cd", "sh", "bash", "python3", "python3.12", "node", "xmrig", "exploit", "rootbash"}
    for programs, _ in acts.COMMAND_READERS:
        if isinstance(programs, frozenset):
            names |= programs
    return names


def test_the_dispatch_of_a_program_is_the_readers_that_declare_it() -> None:
    for program in sorted(_declared_names()):
        expected = tuple(reader for programs, reader in acts.COMMAND_READERS if runs(programs, program))
        assert acts.readers_for(program) == expected, program


def test_readers_of_every_command_run_for_any_program() -> None:
    every = [reader for programs, reader in acts.COMMAND_READERS if programs is None]
    assert every, "the argument readers (debuggers, miners, secret stores) read every command"
    for reader in every:
        assert reader in acts.readers_for("some-program-nobody-declares")


def _walk(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "command" and isinstance(item, str):
                yield item
            else:
                yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


@cache
def _commands() -> tuple[tuple[str, ...], ...]:
    files = sorted(ROOT.glob("rules/*.cases.yaml")) + sorted(ROOT.glob("tests/corpus/*/dangerous/*.yaml"))
    found: dict[tuple[str, ...], None] = {}
    for path in files:
        for line in _walk(yaml.load(path.read_text(), Loader=yaml.CSafeLoader)):
            try:
                commands = shell_commands(line)
            except (ShellLineTooComplexError, ValueError):
                continue
            found.update((tuple(argv), None) for argv in commands if argv)
    return tuple(found)


def test_the_corpora_give_the_declarations_something_to_check() -> None:
    assert len(_commands()) > 2000


# only readers that declare programs (a reader of every command has no outside to check)
_DECLARING = [index for index, (programs, _) in enumerate(acts.COMMAND_READERS) if programs is not None]


@pytest.mark.parametrize("index", _DECLARING)
def test_a_reader_finds_nothing_outside_its_declared_programs(index: int) -> None:
    programs, reader = acts.COMMAND_READERS[index]
    assert programs is not None
    missed = [argv for argv in _commands() if not runs(programs, argv[0]) and list(reader(list(argv)))]
    assert not missed, f"{reader.__module__}.{reader.__name__} acts on undeclared programs: {missed[:3]}"


def test_dispatched_effects_are_every_reader_s_effects() -> None:
    for argv in _commands():
        every = [effect for _, reader in acts.COMMAND_READERS for effect in reader(list(argv))]
        assert acts.command_acts(list(argv)) == every, argv
