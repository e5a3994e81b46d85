"""Helpers shared by the replay tests: write real logs (``dsh-policy run``, the hook adapters) and
candidate packs, run ``dsh-policy replay`` in-process. (A uniquely named module: several test
directories have a ``conftest.py``.)"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Any

import yaml
from dsh_policy.policy import loading
from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.compile import CompiledPolicy
from dsh_policy.policy.loading import LoadFailure

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = tuple(ROOT / "rules" / f"{name}.yaml" for name in ("baseline", "secrets", "injection"))
DEMO = ROOT / "examples" / "sessions" / "demo.yaml"
PARAMS = {"workspace": "/workspace"}
HOOK_PACK = ROOT / "tests" / "hooks" / "packs" / "hook-guard.yaml"
HOOK_PAYLOADS = ROOT / "tests" / "hooks" / "payloads"


def pack_flags(packs: tuple[Path, ...] | list[Path]) -> list[str]:
    """``--pack P`` for each pack."""
    return [flag for pack in packs for flag in ("--pack", str(pack))]


def run_demo(log: Path, packs: tuple[Path, ...] | list[Path] = SHIPPED) -> None:
    """The demo session through ``dsh-policy run`` (the real loop and gateway), logged to ``log``."""
    params = ["--param", "workspace=/workspace"] if tuple(packs) == SHIPPED else []
    with redirect_stdout(io.StringIO()):
        code = cli_main(["run", str(DEMO), *pack_flags(packs), *params, "--audit", str(log)])
    assert code == 0


def records(log: Path) -> list[dict[str, Any]]:
    """Every record of a one-segment log."""
    return [json.loads(line) for line in log.read_text().splitlines()]


def edited_packs(
    directory: Path, name: str, edit: Callable[[str, dict[str, Any]], None], packs: tuple[Path, ...] = SHIPPED
) -> list[Path]:
    """Copies of ``packs`` after ``edit(pack_name, document)``, written under ``directory``."""
    written = []
    for pack in packs:
        document = yaml.load(pack.read_text(), Loader=yaml.CSafeLoader)
        edit(document["metadata"]["name"], document)
        target = directory / f"{name}-{pack.name}"
        target.write_text(yaml.safe_dump(document, sort_keys=False))
        written.append(target)
    return written


def without_rules(predicate: Callable[[dict[str, Any]], bool]) -> Callable[[str, dict[str, Any]], None]:
    """An edit dropping every rule ``predicate`` holds for."""

    def edit(_: str, document: dict[str, Any]) -> None:
        document["spec"]["rules"] = [rule for rule in document["spec"]["rules"] if not predicate(rule)]

    return edit


def compiled(packs: tuple[Path, ...] | list[Path], **params: Any) -> CompiledPolicy:
    """The packs compiled with the demo's params (plus ``params``) when they are the shipped ones,
    else with ``params`` alone."""
    shipped = any(pack.name.endswith(("baseline.yaml", "secrets.yaml", "injection.yaml")) for pack in packs)
    built = loading.build_policy(list(packs), params={**(PARAMS if shipped else {}), **params})
    assert not isinstance(built, LoadFailure), built
    return built


def replay_cli(*argv: str) -> tuple[int, str]:
    """``dsh-policy replay ARGV`` in-process: (exit code, stdout)."""
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli_main(["replay", *argv])
    return code, out.getvalue()


@contextmanager
def stdin_bytes(data: bytes) -> Iterator[None]:
    """``sys.stdin`` reading ``data`` (with ``.buffer``, as the hook command reads it)."""
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    try:
        yield
    finally:
        sys.stdin = saved


def run_hooks(log: Path, events: list[tuple[str, str]], pack: Path = HOOK_PACK) -> list[int]:
    """Each (harness, payload name) through ``dsh-policy hook HARNESS --pack PACK --audit LOG``,
    decided in process (``--in-process``): a log as hook processes write it, one record per event
    and no ``policy_loaded`` (a resident gateway would add one, with rule fingerprints)."""
    codes = []
    for harness, name in events:
        data = (HOOK_PAYLOADS / harness / f"{name}.json").read_bytes()
        with stdin_bytes(data), redirect_stdout(io.StringIO()):
            argv = ["hook", harness, "--pack", str(pack), "--audit", str(log), "--in-process"]
            codes.append(cli_main(argv))
    return codes
