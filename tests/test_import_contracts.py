"""The directions of the code (``.importlinter``): they hold, and each contract catches what it is for.

``core`` and ``audit`` import nothing else of ours, the command-line readers nothing of the policy,
``cel`` nothing of the policy outside itself, nothing imports ``cli``, the policy's modules import
only the layers below them, and no package's modules import each other in a circle.
``test_dependency_rule.py`` complements this for ``core`` and ``audit``: it also catches a module
named as a string to ``importlib``, which an import graph cannot see.

The graph is built once per session without a cache (``cache_dir=None``), so parallel workers write
nothing into the repository.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import grimp
import pytest
from importlinter.application import rendering, use_cases
from importlinter.application.app_config import settings
from importlinter.configuration import configure

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / ".importlinter"


class _GivenGraph:
    """A graph builder that hands import-linter a graph this test built (and may have changed)."""

    def __init__(self, graph: grimp.ImportGraph) -> None:
        self.graph = graph

    def build(self, root_package_names: list[str], cache_dir: str | None, **options: Any) -> Any:
        return self.graph


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("dsh_policy", cache_dir=None)


def _check(graph: grimp.ImportGraph) -> Any:
    """import-linter's report on ``graph`` (what ``lint-imports`` prints, as an object)."""
    configure()
    use_cases._register_built_in_contract_types()  # what lint-imports does before create_report
    options = use_cases.read_user_options(str(CONFIG))
    builder = settings.GRAPH_BUILDER
    settings.configure(GRAPH_BUILDER=_GivenGraph(graph))
    try:
        return use_cases.create_report(options, cache_dir=None)
    finally:
        settings.configure(GRAPH_BUILDER=builder)


def _broken(report: Any) -> set[str]:
    """Names of the contracts the report found broken."""
    return {contract.name for contract, check in report.get_contracts_and_checks() if not check.kept}


def test_the_import_contracts_hold(graph: grimp.ImportGraph) -> None:
    report = _check(graph)
    if report.contains_failures:
        rendering.render_report(report)  # the contract, the offending import and its line
    assert not report.could_not_run and not report.contains_failures, "see the report printed above"
    assert report.kept_count == len(CONTRACTS)  # every contract ran, and each has its probe below


#: One import against each contract (importer, imported, the contract's name as it starts).
CONTRACTS = [
    ("dsh_policy.core.frozen", "dsh_policy.policy.decide", "core imports nothing else of ours"),
    ("dsh_policy.audit.record", "dsh_policy.core.frozen", "audit imports nothing else of ours"),
    ("dsh_policy.cmdline.sql", "dsh_policy.policy.compile", "the command-line readers"),
    ("dsh_policy.policy.cel.engine", "dsh_policy.policy.errors", "cel imports nothing of the policy"),
    ("dsh_policy.policy.review.replay", "dsh_policy.policy.cli.check", "nothing imports the command line"),
    ("dsh_policy.policy.compile", "dsh_policy.policy.runtime.gateway", "the policy's layers"),
    ("dsh_policy.core.frozen", "dsh_policy.core.agent", "no import cycles"),
]


@pytest.mark.parametrize(("importer", "imported", "contract"), CONTRACTS, ids=[c[2] for c in CONTRACTS])
def test_each_contract_catches_an_import_against_it(
    graph: grimp.ImportGraph, importer: str, imported: str, contract: str
) -> None:
    changed = copy.deepcopy(graph)
    changed.add_import(importer=importer, imported=imported)
    broken = _broken(_check(changed))
    assert any(name.startswith(contract) for name in broken), broken
