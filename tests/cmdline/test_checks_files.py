# ruff: noqa: E501  (tables of file texts read better unwrapped)
"""The project's own checks switched off with the file tools (cmdline/effects/checks_files.py,
``call.checks_off``): hooks emptied, scanner hooks dropped, CI jobs that cannot fail, tests turned
into placeholders and ignore files that stop ignoring secrets, in spellings of our own (no corpus
entry), each beside the everyday edit of the same file that must stay allowed."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects.checks_files import file_checks_off


def edit(path: str, old: str, new: str) -> dict[str, str]:
    return {"path": path, "old_string": old, "new_string": new}


def write(path: str, content: str) -> dict[str, str]:
    return {"path": path, "content": content}


OFF = [
    # hooks that run nothing
    write("repo/.git/hooks/pre-push", "#!/usr/bin/env bash\n# temporarily off\ntrue\n"),
    write(".husky/commit-msg", ""),
    write(".husky/pre-push", '#!/bin/sh\n. "$(dirname -- "$0")/_/husky.sh"\n'),
    write(".githooks/pre-commit", "#!/bin/sh\nexit 0\nmake lint\n"),
    edit(".husky/pre-commit", "pnpm lint-staged\npnpm typecheck\n", "# pnpm lint-staged\n# pnpm typecheck\n"),
    edit(".husky/pre-push", "cargo test", "echo skipping tests"),
    edit("/src/app/.git/hooks/pre-commit", "#!/bin/sh\nmake check\n", "#!/bin/sh\nexit 0\nmake check\n"),
    # hook managers' configs
    edit(
        ".pre-commit-config.yaml",
        "  - repo: https://github.com/Yelp/detect-secrets\n    rev: v1.5.0\n    hooks:\n      - id: detect-secrets\n",
        "",
    ),
    edit(
        "lefthook.yml",
        "    secrets:\n      run: ggshield secret scan pre-commit\n",
        "    fmt:\n      run: gofmt -l .\n",
    ),
    edit(".pre-commit-config.yaml", "      - id: mypy\n", "      # - id: mypy\n"),
    write(".pre-commit-config.yaml", "repos: []\n"),
    # CI
    write(".github/workflows/test.yaml", "name: test\non: [pull_request]\njobs: {}\n"),
    write(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  build:\n    runs-on: ubuntu-22.04\n    steps:\n      - uses: actions/checkout@v4\n"
        "      - run: |\n          echo all good\n",
    ),
    edit(
        ".github/workflows/lint.yml",
        "    steps:\n      - run: npm run lint",
        "    if: ${{ false }}\n    steps:\n      - run: npm run lint",
    ),
    edit(".github/workflows/ci.yml", "      - run: go test ./...\n", "      # - run: go test ./...\n"),
    edit(".gitlab-ci.yml", "  script:\n    - bundle exec rspec\n", "  script:\n    - echo skipped\n"),
    edit(".github/workflows/sec.yml", "      - uses: github/codeql-action/analyze@v3\n", ""),
    # tests
    edit("tests/test_billing.py", "    assert invoice.total() == Decimal('9.99')", "    assert True"),
    edit("web/src/cart.test.ts", "  expect(total(items)).toBe(42);", "  expect(true).toBe(true);"),
    edit("pkg/api/handler_test.py", "    self.assertEqual(resp.status, 200)", "    pass"),
    # ignore files
    edit(".gitignore", "node_modules/\n.env\n*.pem\n", "node_modules/\n*.pem\n"),
    edit("backend/.gitignore", "secrets/\n", ""),
    edit(".dockerignore", ".git\n.env.production\n", ".git\n"),
    write(".gitignore", "node_modules/\n.env*\n!.env.production\n"),
]

KEPT = [
    # hooks that still check
    write(".husky/pre-commit", "npx lint-staged\n"),
    write(".git/hooks/pre-push", '#!/bin/sh\nif [ -n "$CI" ]; then\n  exit 0\nfi\nnpm test\n'),
    edit(".husky/pre-commit", "npx lint-staged\n", "npx lint-staged\nnpm run typecheck\n"),
    edit(".husky/pre-push", "npm test", "npm run test:unit"),
    write(".husky/.gitignore", "_\n"),
    # hook configs
    edit(".pre-commit-config.yaml", "      - id: black\n", "      - id: ruff-format\n"),
    edit(
        ".pre-commit-config.yaml",
        "  - repo: https://github.com/gitleaks/gitleaks\n    rev: v8.18.0\n",
        "  - repo: https://github.com/gitleaks/gitleaks\n    rev: v8.21.2\n",
    ),
    write(
        ".pre-commit-config.yaml",
        "repos:\n  - repo: https://github.com/psf/black\n    rev: 24.3.0\n    hooks:\n      - id: black\n",
    ),
    # CI
    edit(
        ".github/workflows/ci.yml",
        "      - run: npm test",
        "      - run: npm ci\n      - run: npm test -- --coverage",
    ),
    edit(".github/workflows/ci.yml", "      - run: pytest", "      - run: tox -e py312"),
    edit(".github/workflows/ci.yml", "python-version: '3.11'", "python-version: '3.12'"),
    edit(".github/workflows/ci.yml", "      - run: npm run lint", "      - uses: github/super-linter@v6"),
    edit(
        ".github/workflows/deploy.yml",
        "    if: github.ref == 'refs/heads/main'",
        "    if: github.ref == 'refs/heads/release'",
    ),
    write(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: make test\n",
    ),
    write(
        ".github/workflows/release.yml",
        "on: push\njobs:\n  r:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: softprops/action-gh-release@v2\n",
    ),
    # tests
    edit(
        "tests/test_billing.py",
        "    assert invoice.total() == 9",
        "    assert invoice.total() == Decimal('9.99')",
    ),
    edit("tests/test_parser.py", "def test_names():", "@unittest.expectedFailure\ndef test_names():"),
    write("tests/test_new.py", "def test_stub():\n    assert True\n"),
    edit("tests/test_old.py", "    assert legacy() == 1\n", ""),
    # ignore files
    edit(".gitignore", "node_modules/\n", "node_modules/\n.env.local\ncoverage/\n"),
    edit(".gitignore", ".env\n", ".env*\n"),
    edit(".gitignore", ".env\n", ".env\n!.env.example\n"),
    write(".gitignore", "dist/\n.env\n"),
    # other files
    write("src/hooks/useAuth.ts", "export const x = 1;\n"),
    edit("docs/testing.md", "assert result == 3", "assert True"),
]


@pytest.mark.parametrize("args", OFF)
def test_checks_switched_off_are_read(args: dict[str, str]) -> None:
    assert file_checks_off(args) != ""


@pytest.mark.parametrize("args", KEPT)
def test_everyday_edits_of_the_same_files_are_not(args: dict[str, str]) -> None:
    assert file_checks_off(args) == ""


def test_a_patch_is_read_per_file() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: README.md\n@@\n-old\n+new\n"
        "*** Update File: .husky/pre-commit\n@@\n-npx lint-staged\n+# npx lint-staged\n*** End Patch"
    )
    assert "hook" in file_checks_off({"patch": patch})
    unified = "--- a/.gitignore\n+++ b/.gitignore\n@@ -1,2 +1,1 @@\n dist/\n-.env\n"
    assert "secret" in file_checks_off({"patch": unified})
    added = "*** Begin Patch\n*** Add File: .husky/pre-push\n+npm test\n*** End Patch"
    assert file_checks_off({"patch": added}) == ""


def test_other_arguments_are_ignored() -> None:
    assert file_checks_off({"path": "src/app.py", "content": "x = 1\n"}) == ""
    assert file_checks_off("not a map") == ""
    assert file_checks_off({"paths": [".husky/pre-commit"], "content": "exit 0\n"}) != ""
