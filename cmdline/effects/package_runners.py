"""Package runners read from a shell line: which registry a runner fetches from, and the package
operand as written.

A runner fetches a package and runs it in one step (``npx pkg@1.2``, ``pnpm dlx``, ``yarn dlx``,
``bunx``/``bun x``, ``npm exec``/``npm x``, ``deno run npm:pkg``; ``uvx``, ``pipx run``, ``uv tool
run``). The shell reader folds that package into the program it runs (``npx rimraf`` is
``rimraf``), so the runner's own argv no longer names it, and the readers that judge the package
(a malicious release, a repository instead of the registry, a look-alike name) read it from the
line. This is the one grammar they share; each applies its own reading of the operand.

Options before the operand are skipped (``npx -y pkg``, ``uvx --python=3.12 pkg``); an option's
value given as the next word is taken as the operand (``uvx --from SPEC cmd`` yields ``SPEC``,
which is what that runner fetches). Every runner on the line is read, also one that an earlier
runner's words contain (``npm x npx pkg``).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["runner_specs"]

_RUNNER = lazy_compile(
    r"(?=(?:^|[\s;&|(])"
    r"(?:(?P<npm>npx|bunx|pnpx|(?:pnpm|yarn)\s+dlx|npm\s+(?:exec|x)|bun\s+x)"
    r"|(?P<deno>deno\s+run)"
    r"|(?P<pypi>uvx|pipx\s+run|uv\s+tool\s+run))"
    r"\s+(?:-{1,2}[\w-]+(?:=\S+)?\s+)*(?P<spec>[^\s;&|()]+))"
)
"""A runner at the line's start or after a separator, its options, and the next word. Matched in a
lookahead, so that the words of one runner do not hide another."""
_SPELLINGS = ("npx", "npm", "bun", "yarn", "uv", "pipx", "deno")
"""A word every runner's spelling holds (``pnpx`` holds ``npx``, ``pnpm`` ``npm``, ``uvx`` ``uv``): a
line without one is not searched."""


def runner_specs(line: str) -> Iterator[tuple[str, str]]:
    """``(ecosystem, spec)`` for every package runner on ``line``, in line order: ``"npm"`` or
    ``"pypi"``, and the package operand as written (``pkg@1.2``, ``@scope/pkg``,
    ``github:user/repo``, ``pkg==1.0``; ``deno run``'s ``npm:`` prefix removed, its other operands
    are no package)."""
    if not any(word in line for word in _SPELLINGS):
        return
    yield from _specs(line)


@lru_cache(maxsize=256)
def _specs(line: str) -> tuple[tuple[str, str], ...]:
    """:func:`runner_specs` of a line holding a runner's spelling, searched once for the three
    readers that judge the same line's runners (malicious, from a repository, look-alike)."""
    return tuple(_search(line))


def _search(line: str) -> Iterator[tuple[str, str]]:
    for match in _RUNNER.finditer(line):
        spec = match.group("spec")
        if match.group("npm"):
            yield "npm", spec
        elif match.group("pypi"):
            yield "pypi", spec
        elif spec.startswith("npm:") and len(spec) > 4:
            yield "npm", spec[4:]
