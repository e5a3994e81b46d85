"""The documentation points only at things that exist: links, anchors and module names.

A clone is all a reader has. This test reads README.md, every page under docs/ and
benchmarks/README.md and fails when

- a relative link (``[text](path)``, ``[text](path#anchor)``, ``[text](#anchor)``, or a reference
  definition ``[name]: path``) names a file or folder the repository lacks, leaves the repository,
  or names an anchor that no heading of the target page produces (GitHub's slugs);
- a backticked path ending in ``.py`` (``policy/cel/checker.py``,
  ``tests/core/test_core_edges.py::test_x``) names no file, read from the repository root (or from
  the page's own folder); a bare file name (``sitecustomize.py``) is not a path and is not checked;
- a backticked dotted name under ``dsh_policy.`` (``dsh_policy.policy.decide``,
  ``dsh_policy.audit.verify_log(...)``), or a ``from dsh_policy.X import a, b`` line of a fenced
  Python block, does not import;
- a page cites something outside the repository (a path into ``../shared``, a project issue by
  number).

The checker is also run on pages written into a temporary folder, each with one deliberate fault,
so it cannot pass by finding nothing.
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_FENCE = re.compile(r"^(?P<fence>```|~~~)[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
_PY_FENCE = re.compile(r"^```(?:python|py)[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
_INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?(?P<target>[^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"
)
_REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(?P<target>\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)
_HEADING = re.compile(r"^ {0,3}(?P<hashes>#{1,6})[ \t]+(?P<text>.*?)[ \t#]*$", re.M)
_HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"(?P<name>[^\"]+)\"", re.I)
_CODE_SPAN = re.compile(r"(?P<ticks>`+)(?P<body>.+?)(?P=ticks)", re.S)
_PY_PATH = re.compile(r"^(?P<path>[\w.\-/]*[\w\-]\.py)(?:::[\w:\[\]-]+)?$")
_DOTTED = re.compile(r"^(?P<name>dsh_policy(?:\.[A-Za-z_]\w*)+)(?:\(.*\))?$", re.S)
_FROM_IMPORT = re.compile(r"^\s*from\s+(?P<module>dsh_policy(?:\.\w+)*)\s+import\s+(?P<names>[^#\n]+)", re.M)
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)
_OUTSIDE_TEXT = re.compile(r"\.\./shared/")
# "issue 12", "issues 12 and 13": a project's tracker is not part of a clone. "owner/repo issue N"
# (another project's public tracker) is a citation a reader can follow, and stays allowed.
_ISSUE = re.compile(r"(?P<before>\S+\s+)?\bissues?\s+#?\d+", re.I)
_FOREIGN_REPO = re.compile(r"^[\w.-]+/[\w.-]+\s+$")


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing a page names that does not exist."""

    page: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.what}"


def documentation_pages(root: Path) -> list[Path]:
    """README.md, docs/**/*.md and benchmarks/README.md, those that exist."""
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md")), root / "benchmarks" / "README.md"]
    return [page for page in pages if page.is_file()]


def _blank_fences(text: str) -> str:
    """The text with fenced blocks blanked out (line numbers kept): their links are examples."""
    return _FENCE.sub(lambda match: "\n" * match.group(0).count("\n"), text)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: rendered text, lower case, punctuation dropped, spaces
    to hyphens (duplicates get ``-1``, ``-2`` in :func:`anchors_of`)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link renders as its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML renders as nothing here
    text = text.replace("`", "").strip().lower()
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if char in "-_" or char == " " or category[0] in "LN" or category == "Mn":
            kept.append(char)
    return "".join(kept).replace(" ", "-")


@cache
def anchors_of(page: Path) -> frozenset[str]:
    """Every anchor a Markdown page offers: its headings' slugs and explicit HTML anchors."""
    text = _blank_fences(page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    anchors: set[str] = set()
    for match in _HEADING.finditer(text):
        slug = github_slug(match["text"])
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    anchors.update(match["name"] for match in _HTML_ANCHOR.finditer(text))
    return frozenset(anchors)


def _check_link(root: Path, page: Path, target: str) -> str | None:
    """Why ``target`` (a link on ``page``) does not resolve, or None."""
    if _EXTERNAL.match(target):
        return None
    path_part, _, anchor = target.partition("#")
    destination = (page.parent / path_part).resolve() if path_part else page
    try:
        destination.relative_to(root.resolve())
    except ValueError:
        return f"link {target!r} leaves the repository"
    if not destination.exists():
        return f"link {target!r}: no such file or folder"
    if anchor:
        if destination.suffix.lower() != ".md" or destination.is_dir():
            return f"link {target!r}: an anchor into a file that is not a Markdown page"
        if anchor not in anchors_of(destination):
            return f"link {target!r}: {destination.name} has no heading with anchor #{anchor}"
    return None


def _check_py_path(root: Path, page: Path, path: str) -> str | None:
    if "/" not in path:
        return None  # a bare name (`sitecustomize.py`) may be anyone's file; a path is ours
    relative = path.removeprefix("./")
    if (root / relative).is_file() or (page.parent / relative).is_file():
        return None
    return f"`{path}`: no such file"


def _check_dotted(name: str, imported: tuple[str, ...] = ()) -> str | None:
    """Why the dotted ``name`` does not import, or ``from name import *imported`` would fail; None
    when both work."""
    parts = name.split(".")
    for split in range(len(parts), 0, -1):
        module_name = ".".join(parts[:split])
        try:
            value: object = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            missing = error.name
            if missing is not None and not module_name.startswith(missing) and missing != module_name:
                return f"`{name}`: importing {module_name} fails: {error}"
            continue
        where = module_name
        for attribute in parts[split:]:
            if not hasattr(value, attribute):
                return f"`{name}`: {where} has no {attribute!r}"
            value, where = getattr(value, attribute), f"{where}.{attribute}"
        for attribute in imported:
            if not hasattr(value, attribute):
                return f"`{name}`: {where} has no {attribute!r}"
        return None
    return f"`{name}`: no such module"


def check_page(root: Path, page: Path) -> list[Problem]:
    """Everything on ``page`` that names what does not exist."""
    raw = page.read_text(encoding="utf-8")
    text = _blank_fences(raw)
    shown = str(page.relative_to(root)) if page.is_relative_to(root) else str(page)
    problems: list[Problem] = []

    def report(offset: int, what: str, source: str = text) -> None:
        problems.append(Problem(shown, _line_of(source, offset), what))

    prose = _CODE_SPAN.sub(lambda match: " " * len(match.group(0)), text)
    for pattern in (_INLINE_LINK, _REFERENCE_DEF):
        for match in pattern.finditer(prose):
            why = _check_link(root, page, match["target"])
            if why:
                report(match.start(), why)
    for match in _CODE_SPAN.finditer(text):
        body = match["body"].strip()
        path = _PY_PATH.match(body)
        if path:
            why = _check_py_path(root, page, path["path"])
            if why:
                report(match.start(), why)
        dotted = _DOTTED.match(body)
        if dotted:
            why = _check_dotted(dotted["name"])
            if why:
                report(match.start(), why)
    for block in _PY_FENCE.finditer(raw):
        for statement in _FROM_IMPORT.finditer(block["body"]):
            names = tuple(
                part.strip().split(" as ")[0].strip()
                for part in statement["names"].strip().strip("()").split(",")
                if part.strip()
            )
            why = _check_dotted(statement["module"], names)
            if why:
                report(block.start("body") + statement.start(), why, raw)
    for match in _OUTSIDE_TEXT.finditer(raw):
        report(match.start(), "names a path outside the repository (../shared/)", raw)
    for match in _ISSUE.finditer(raw):
        before = match["before"] or ""
        if not _FOREIGN_REPO.match(before.lstrip("([{\"'`")):
            report(match.start(), f"cites a project issue by number ({match.group(0).strip()!r})", raw)
    return problems


def test_every_link_anchor_and_module_name_in_the_docs_exists() -> None:
    pages = documentation_pages(ROOT)
    assert ROOT / "README.md" in pages and len(pages) > 3, pages
    problems = [problem for page in pages for problem in check_page(ROOT, page)]
    assert not problems, "\n".join(map(str, problems))


def test_every_docs_page_is_reachable_from_the_docs_index() -> None:
    index = ROOT / "docs" / "README.md"
    linked = {
        (index.parent / match["target"].partition("#")[0]).resolve()
        for match in _INLINE_LINK.finditer(_blank_fences(index.read_text(encoding="utf-8")))
        if not _EXTERNAL.match(match["target"])
    }
    unlinked = [
        str(page.relative_to(ROOT))
        for page in sorted((ROOT / "docs").rglob("*.md"))
        if page != index and page.resolve() not in linked
    ]
    assert not unlinked, f"docs/README.md does not link {unlinked}"


def test_the_readme_is_short_and_reaches_the_three_first_questions_in_one_click() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250, "the README grew past ~250 lines: move reference into docs/"
    targets = {match["target"] for match in _INLINE_LINK.finditer(_blank_fences(text))}
    for wanted in ("docs/hooks.md#claude-code", "docs/auditors-guide.md", "docs/rules.md"):
        assert wanted in targets, f"the README has no direct link to {wanted}"


# --- the checker finds what it must -----------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture()
def sandbox(tmp_path: Path) -> Path:
    """A tiny repository: one page with real targets to point at."""
    headings = "# A page\n\n## The `dsh-policy` command\n\n## Twice\n\n## Twice\n"
    _write(tmp_path / "docs" / "target.md", headings)
    _write(tmp_path / "pkg" / "module.py", "")
    return tmp_path


def _problems(root: Path, body: str) -> list[str]:
    page = _write(root / "docs" / "page.md", body)
    return [problem.what for problem in check_page(root, page)]


def test_sound_references_pass(sandbox: Path) -> None:
    body = (
        "# Page\n\nSee [it](target.md), [the command](target.md#the-dsh-policy-command),\n"
        "[second](target.md#twice-1), [self](#page), [site](https://example.com/x#y),\n"
        "[folder](../pkg/) and `pkg/module.py`, `sitecustomize.py`, `pkg/module.py::test_x`,\n"
        "`dsh_policy.audit.verify_log(...)`.\n\n"
        "```python\nfrom dsh_policy.policy import Policy, ToolCallEvent\n```\n\n"
        "```sh\ncat [not a link](nowhere.md) x.md\n```\n\nopenai/codex issue 41979 is theirs.\n"
    )
    assert _problems(sandbox, body) == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("[gone](missing.md)\n", "no such file"),
        ("[ref]: missing/folder/\n", "no such file"),
        ("[anchor](target.md#no-such-heading)\n", "no heading with anchor #no-such-heading"),
        ("[own](#nowhere)\n", "no heading with anchor #nowhere"),
        ("[away](../../outside.md)\n", "leaves the repository"),
        ("The code is in `pkg/missing.py`.\n", "`pkg/missing.py`: no such file"),
        ("The test is `tests/nowhere/test_x.py::test_y`.\n", "no such file"),
        ("Call `dsh_policy.policy.no_such_module.decide`.\n", "dsh_policy.policy.no_such_module"),
        ("Call `dsh_policy.audit.no_such_name`.\n", "has no 'no_such_name'"),
        ("```python\nfrom dsh_policy.policy import Policy, NoSuchThing\n```\n", "has no 'NoSuchThing'"),
        ("Read ../shared/design/POLICY.md.\n", "outside the repository"),
        ("As issue 12 found.\n", "cites a project issue"),
    ],
)
def test_each_kind_of_broken_reference_is_found(sandbox: Path, body: str, expected: str) -> None:
    found = _problems(sandbox, "# Page\n\n" + body)
    assert len(found) == 1 and expected in found[0], found


def test_slugs_match_githubs() -> None:
    assert github_slug("The `dsh-policy` command") == "the-dsh-policy-command"
    assert github_slug("Managed hooks: the way to deploy") == "managed-hooks-the-way-to-deploy"
    assert github_slug("Secrets in Claude Code's tool output") == "secrets-in-claude-codes-tool-output"
    assert github_slug("1. Plugin runtime (Cordis-like)") == "1-plugin-runtime-cordis-like"
    assert github_slug("[Linked](x.md) heading") == "linked-heading"
