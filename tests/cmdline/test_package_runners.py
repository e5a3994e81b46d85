"""The one reader of package runners on a shell line, and the three readers that judge its operand
(malicious release, repository instead of registry, look-alike name). Every spelling any of the
three knew before they shared the reader is listed here: one the grammar loses fails."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects.code_sources import runner_source_acts
from dsh_policy.cmdline.effects.lookalikes import runner_lookalike_acts
from dsh_policy.cmdline.effects.package_runners import runner_specs

NPM_RUNNERS = ["npx", "bunx", "pnpx", "pnpm dlx", "yarn dlx", "npm exec", "npm x", "bun x"]
PYPI_RUNNERS = ["uvx", "pipx run", "uv tool run"]


@pytest.mark.parametrize("runner", NPM_RUNNERS)
def test_every_npm_runner_yields_its_operand(runner: str) -> None:
    assert list(runner_specs(f"cd app && {runner} -y --quiet @scope/tool@1.2 --flag")) == [
        ("npm", "@scope/tool@1.2")
    ]


@pytest.mark.parametrize("runner", PYPI_RUNNERS)
def test_every_pypi_runner_yields_its_operand(runner: str) -> None:
    assert list(runner_specs(f"({runner} --python=3.12 tool==1.0 check)")) == [("pypi", "tool==1.0")]


def test_deno_runs_only_its_npm_prefixed_operands() -> None:
    assert list(runner_specs("deno run -A npm:cowsay@1.5.0 hi")) == [("npm", "cowsay@1.5.0")]
    assert list(runner_specs("deno run --allow-net server.ts")) == []


@pytest.mark.parametrize(
    "line",
    ["echo npx", "npxtool run", "my-npx pkg", "npm install left-pad", "uv run pytest", "pipx install black"],
)
def test_no_runner_no_operand(line: str) -> None:
    assert list(runner_specs(line)) == []


def test_every_runner_on_the_line_is_read_also_inside_another() -> None:
    assert list(runner_specs("uvx --python=3.12;npx a@1 && pipx run b")) == [
        ("pypi", "a@1"),
        ("npm", "a@1"),
        ("pypi", "b"),
    ]
    assert list(runner_specs("npm x npx tool")) == [("npm", "npx"), ("npm", "tool")]


@pytest.mark.parametrize("runner", [*NPM_RUNNERS, *PYPI_RUNNERS])
def test_each_runner_reaches_the_repository_reader(runner: str) -> None:
    found = list(runner_source_acts(f"{runner} git+https://github.com/Some/Tool.git"))
    assert [(e["kind"], e["target"]) for e in found] == [("source", "git:github.com/some/tool")]


def test_the_npm_shorthand_is_read_for_npm_runners_only() -> None:
    assert [e["target"] for e in runner_source_acts("npx some/tool")] == ["git:github.com/some/tool"]
    assert list(runner_source_acts("uvx some/tool")) == []


@pytest.mark.parametrize(("runner", "name"), [*((r, "crossenv") for r in NPM_RUNNERS), ("uvx", "reqeusts")])
def test_each_runner_reaches_the_lookalike_reader(runner: str, name: str) -> None:
    assert [e["kind"] for e in runner_lookalike_acts(f"{runner} {name}")] == ["lookalike-package"]
