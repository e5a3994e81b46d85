# ruff: noqa: E501  (tables of command lines and file texts read better unwrapped)
"""Installs that take code from outside the registry (cmdline/effects/code_sources.py): a git
repository or a code host's archive named on an install line of any package manager, or written
into a dependency file the next install reads. Spellings are this project's own, from each tool's
documentation of its git and URL sources; each has registry and local look-alikes that must stay
without the effect."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import shell_acts
from dsh_policy.cmdline.effects.code_sources import code_source, dependency_installs
from dsh_policy.cmdline.effects.later_commands import later_commands, later_unread


def _sources(line: str) -> list[tuple[str, str]]:
    return [(e["kind"], e["target"]) for e in shell_acts(line) if e["kind"] in ("source", "registry")]


@pytest.mark.parametrize(
    ("line", "target"),
    [
        ("npm install github:octo-dev/left-pad#main", "git:github.com/octo-dev/left-pad"),
        ("npm i octo-dev/left-pad", "git:github.com/octo-dev/left-pad"),
        (
            "npm install --save git+https://github.com/Octo-Dev/Left-Pad.git",
            "git:github.com/octo-dev/left-pad",
        ),
        (
            "npm install lib@git+ssh://git@gitlab.example.net/team/lib.git#v2",
            "git:gitlab.example.net/team/lib",
        ),
        ("pnpm add gitlab:team/widgets", "git:gitlab.com/team/widgets"),
        ("yarn add https://github.com/octo-dev/left-pad/tarball/main", "git:github.com/octo-dev/left-pad"),
        ("yarn global add bitbucket:team/cli", "git:bitbucket.org/team/cli"),
        ("bun add git+https://codeberg.org/team/kit.git", "git:codeberg.org/team/kit"),
        ("npx github:octo-dev/setup-tool init", "git:github.com/octo-dev/setup-tool"),
        ("npm exec --package=github:octo-dev/cli -- cli run", "git:github.com/octo-dev/cli"),
        ("pnpm dlx github:octo-dev/scaffold my-app", "git:github.com/octo-dev/scaffold"),
        ("bunx git+https://github.com/octo-dev/cli.git", "git:github.com/octo-dev/cli"),
        (
            "pip install git+https://github.com/octo-dev/requests.git@master",
            "git:github.com/octo-dev/requests",
        ),
        ("pip3 install 'mylib @ git+https://github.com/octo-dev/mylib'", "git:github.com/octo-dev/mylib"),
        ("pip install mylib @ git+ssh://git@github.com/octo-dev/mylib.git", "git:github.com/octo-dev/mylib"),
        (
            "python -m pip install -e git+https://git.example.org/team/core#egg=core",
            "git:git.example.org/team/core",
        ),
        (
            "pip install https://github.com/octo-dev/mylib/archive/refs/heads/main.zip",
            "git:github.com/octo-dev/mylib",
        ),
        ("uv pip install git+https://github.com/octo-dev/mylib", "git:github.com/octo-dev/mylib"),
        ("uv add git+https://github.com/octo-dev/mylib --branch dev", "git:github.com/octo-dev/mylib"),
        ("uv tool install git+https://github.com/octo-dev/tool", "git:github.com/octo-dev/tool"),
        ("uvx --from git+https://github.com/octo-dev/tool tool --help", "git:github.com/octo-dev/tool"),
        ("poetry add git+https://github.com/octo-dev/mylib.git#develop", "git:github.com/octo-dev/mylib"),
        ("pdm add git+https://github.com/octo-dev/mylib", "git:github.com/octo-dev/mylib"),
        ("pipx install git+https://github.com/octo-dev/tool.git", "git:github.com/octo-dev/tool"),
        ("pipx run --spec git+https://github.com/octo-dev/tool tool", "git:github.com/octo-dev/tool"),
        (
            "cargo install --git https://github.com/octo-tools/ripgrep-fast",
            "git:github.com/octo-tools/ripgrep-fast",
        ),
        (
            "cargo add fastlib --git https://git.example.org/team/fastlib --branch main",
            "git:git.example.org/team/fastlib",
        ),
        ("bundle add mygem --git https://github.com/octo-dev/mygem", "git:github.com/octo-dev/mygem"),
        ("bundle add mygem --github octo-dev/mygem", "git:github.com/octo-dev/mygem"),
        ("gem specific_install https://github.com/octo-dev/gem.git", "git:github.com/octo-dev/gem"),
        ("sudo -u app npm install github:octo-dev/x", "git:github.com/octo-dev/x"),
        (
            "go mod edit -replace=github.com/spf13/cobra=github.com/octo-dev/cobra@v1.8.0",
            "git:github.com/octo-dev/cobra",
        ),
        ("go mod edit -replace github.com/a/b=gitlab.com/team/b@v0.1.0", "git:gitlab.com/team/b"),
    ],
)
def test_an_install_from_a_repository_is_a_source(line: str, target: str) -> None:
    assert ("source", target) in _sources(line), _sources(line)


@pytest.mark.parametrize(
    ("line", "url"),
    [
        ("npm install https://cdn.example.net/pkg-1.0.0.tgz", "https://cdn.example.net/pkg-1.0.0.tgz"),
        (
            "pip install https://files.example.org/wheels/tool-2.0-py3-none-any.whl",
            "https://files.example.org/wheels/tool-2.0-py3-none-any.whl",
        ),
    ],
)
def test_an_archive_on_another_host_is_judged_as_a_registry(line: str, url: str) -> None:
    assert ("registry", url) in _sources(line)


@pytest.mark.parametrize(
    "line",
    [
        "npm install",
        "npm install react@18 @types/node@20 --save-dev",
        "npm install ./packages/shared ../lib file:../other",
        "pnpm --filter web add zod",
        "yarn workspace web add react-dom",
        "npx prettier --write src/index.ts",
        "npx eslint src/components",
        "npm exec -- tsc --noEmit",
        "pip install -e .",
        "pip install -e './packages/core[dev]'",
        "pip install -r requirements/dev.txt",
        "pip install 'flask>=3' requests==2.32.3",
        "uvx ruff check .",
        "uv tool install ruff",
        "cargo install ripgrep",
        "cargo install --path .",
        "bundle add rspec-rails --group test",
        "go install golang.org/x/tools/gopls@latest",
        "git clone https://github.com/octo-dev/left-pad",
        "npm view github:octo-dev/left-pad",
        "go mod edit -replace=github.com/a/b=../b",
        "go mod edit -replace=github.com/a/b=github.com/a/b@v1.2.3",
        "go mod edit -replace=github.com/a/b=github.com/a/b-fork@v1.2.3",
        "go mod edit -require=github.com/octo-dev/x@v1.0.0",
    ],
)
def test_registry_names_and_local_paths_are_no_source(line: str) -> None:
    assert _sources(line) == []


def test_a_malformed_url_is_a_source_to_vet_not_an_error() -> None:
    assert code_source("https://[::1/pkg.tgz") == ("registry", "https://[::1/pkg.tgz")


def test_a_file_url_and_a_workspace_protocol_are_local() -> None:
    for spec in ("file:///srv/pkgs/lib.tgz", "workspace:*", "link:../lib", "npm:other@1", "~/src/lib"):
        assert code_source(spec, npm_shorthand=True) is None
    # a bare user/repo is npm's shorthand only; for pip it is a path
    assert code_source("octo-dev/left-pad") is None
    assert code_source("octo-dev/left-pad", npm_shorthand=True) == (
        "source",
        "git:github.com/octo-dev/left-pad",
    )


@pytest.mark.parametrize(
    ("path", "text", "line"),
    [
        (
            "package.json",
            '{"dependencies": {"utils-core": "git+https://github.com/octo-dev/utils-core.git#main", "react": "^18"}}',
            "npm install 'git+https://github.com/octo-dev/utils-core.git#main'",
        ),
        ("package.json", '{"devDependencies": {"fmt": "octo-dev/fmt"}}', "npm install octo-dev/fmt"),
        (
            "web/package.json",
            '"dependencies": {\n    "utils-core": "github:octo-dev/utils-core",',
            "npm install github:octo-dev/utils-core",
        ),
        (
            "requirements.txt",
            "requests==2.32.3\nmylib @ git+https://github.com/octo-dev/mylib\n",
            "pip install 'mylib @ git+https://github.com/octo-dev/mylib'",
        ),
        (
            "requirements/dev.txt",
            "-e git+https://github.com/octo-dev/core#egg=core  # pinned fork\n",
            "pip install -e 'git+https://github.com/octo-dev/core#egg=core'",
        ),
        (
            "pyproject.toml",
            '[project]\ndependencies = ["mylib @ git+https://github.com/octo-dev/mylib"]\n',
            "pip install 'mylib @ git+https://github.com/octo-dev/mylib'",
        ),
        (
            "pyproject.toml",
            '[tool.uv.sources]\nmylib = { git = "https://github.com/octo-dev/mylib", rev = "main" }\n',
            "pip install git+https://github.com/octo-dev/mylib",
        ),
        (
            "pyproject.toml",
            '[tool.poetry.dependencies]\nmylib = { git = "https://github.com/octo-dev/mylib.git", branch = "dev" }\n',
            "pip install git+https://github.com/octo-dev/mylib.git",
        ),
        (
            "Cargo.toml",
            '[dependencies]\nfast = { git = "https://github.com/octo-dev/fast" }\n',
            "cargo add --git https://github.com/octo-dev/fast",
        ),
        (
            "Gemfile",
            "gem 'mygem', git: 'https://github.com/octo-dev/mygem'\n",
            "bundle add mygem --git https://github.com/octo-dev/mygem",
        ),
        ("Gemfile", 'gem "mygem", :github => "octo-dev/mygem"\n', "bundle add mygem --github octo-dev/mygem"),
        (
            "package.json",
            '{"overrides": {"left-pad": "github:octo-dev/left-pad"}, "pnpm": {"overrides": {"a>b": "octo-dev/b"}}}',
            "npm install github:octo-dev/left-pad",
        ),
        (
            "go.mod",
            "module example.com/x\n\nreplace (\n\tgithub.com/spf13/cobra v1.8.0 => github.com/octo-dev/cobra v1.8.1\n)\n",
            "go mod edit -replace=github.com/spf13/cobra=github.com/octo-dev/cobra@v1.8.1",
        ),
    ],
)
def test_a_dependency_file_implies_the_install_of_its_outside_sources(
    path: str, text: str, line: str
) -> None:
    assert line in dependency_installs(path, text)
    assert line in later_commands(path, text)
    assert not later_unread(path, text)


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (
            "package.json",
            '{"name": "acme", "main": "dist/index.js", "repository": {"type": "git", "url": "git+https://github.com/acme/acme.git"}, "homepage": "https://github.com/acme/acme#readme", "dependencies": {"react": "^18", "local": "file:../local", "shared": "workspace:*"}}',
        ),
        (
            "package.json",
            '"version": "1.0.1",\n  "repository": "github:acme/acme",\n  "main": "dist/index.js",',
        ),
        (
            "package.json",
            '"publishConfig": {"registry": "https://npm.acme.internal/"},\n  "docs": "https://docs.acme.dev/guide.tgz"',
        ),
        ("requirements.txt", "requests==2.32.3\n-e .\n-r base.txt\n--index-url https://pypi.org/simple\n"),
        (
            "pyproject.toml",
            '[project]\ndependencies = ["httpx>=0.27"]\n[project.urls]\nRepository = "https://github.com/acme/acme.git"\n[tool.uv.sources]\nlocal = { path = "../local" }\n',
        ),
        (
            "Cargo.toml",
            '[package]\nrepository = "https://github.com/acme/acme"\n[dependencies]\nserde = { version = "1" }\n',
        ),
        ("Gemfile", "source 'https://rubygems.org'\ngem 'rails', '~> 7.1'\ngem 'local', path: '../local'\n"),
        (
            "go.mod",
            "module example.com/x\n\nrequire github.com/spf13/cobra v1.8.0\n\nreplace example.com/y => ../y\n",
        ),
    ],
)
def test_registry_dependencies_and_metadata_imply_no_install(path: str, text: str) -> None:
    assert dependency_installs(path, text) == []


LOCKS = {
    "package-lock.json": (
        '{"packages": {"node_modules/a": {"resolved": "https://registry.npmjs.org/a/-/a-1.0.0.tgz"},'
        ' "node_modules/b": {"resolved": "https://registry.npmjs.org/b/-/b-2.0.0.tgz"},'
        ' "node_modules/c": {"resolved": "https://npm.mirror.example/c/-/c-1.0.0.tgz"},'
        ' "node_modules/d": {"resolved": "git+ssh://git@github.com/octo-dev/d.git#abc123"}}}'
    ),
    "pnpm-lock.yaml": (
        "packages:\n  a@1.0.0:\n    resolution: {integrity: sha512-x}\n"
        "  d@git+https://github.com/octo-dev/d.git#abc:\n"
        "    resolution: {commit: abc, repo: https://github.com/octo-dev/d, type: git}\n"
    ),
    "uv.lock": (
        '[[package]]\nname = "httpx"\nsource = { registry = "https://pypi.org/simple" }\n'
        '[[package]]\nname = "mylib"\nsource = { git = "https://github.com/octo-dev/mylib?rev=main#abc" }\n'
    ),
    "poetry.lock": (
        '[[package]]\nname = "mylib"\n\n[package.source]\ntype = "git"\n'
        'url = "https://github.com/octo-dev/mylib.git"\nreference = "main"\n'
    ),
    "Cargo.lock": (
        '[[package]]\nname = "serde"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n'
        '[[package]]\nname = "fast"\nsource = "git+https://github.com/octo-dev/fast?branch=main#abc"\n'
    ),
    "Gemfile.lock": (
        "GIT\n  remote: https://github.com/octo-dev/mygem.git\n  revision: abc\n\n"
        "GEM\n  remote: https://rubygems.org/\n  specs:\n    rails (7.1.0)\n"
    ),
}


@pytest.mark.parametrize("path", sorted(LOCKS))
def test_a_lockfile_implies_the_install_of_the_repository_it_pins(path: str) -> None:
    lines = dependency_installs(path, LOCKS[path])
    targets = [target for line in lines for kind, target in _sources(line) if kind == "source"]
    assert [t for t in targets if t.startswith("git:github.com/octo-dev/")], lines
    assert later_commands(path, LOCKS[path]) == lines


def test_a_lockfile_names_each_host_once_and_its_registry_as_a_registry() -> None:
    lines = dependency_installs("web/package-lock.json", LOCKS["package-lock.json"])
    assert lines[:2] == [
        "npm install https://registry.npmjs.org/a/-/a-1.0.0.tgz",  # b's host is not repeated
        "npm install https://npm.mirror.example/c/-/c-1.0.0.tgz",
    ]
    # crates.io's own index, named as a GitHub URL in Cargo.lock, is the registry
    assert not [
        s for line in dependency_installs("Cargo.lock", LOCKS["Cargo.lock"][:90]) for s in _sources(line)
    ]
    many = "".join(f'"resolved": "https://h{i}.example/x.tgz",\n' for i in range(500))
    assert len(dependency_installs("package-lock.json", many)) == 20


def test_an_archive_url_in_a_manifest_fragment_is_the_install_it_implies() -> None:
    fragment = '"devDependencies": {\n    "fmt-kit": "https://pkgs.example-host.io/fmt-kit-2.0.1.tgz",'
    assert dependency_installs("package.json", fragment) == [
        "npm install https://pkgs.example-host.io/fmt-kit-2.0.1.tgz"
    ]
    # a link that is no archive stays metadata-like text in a fragment
    assert dependency_installs("package.json", '"docs": "https://example-host.io/guide"') == []


@pytest.mark.parametrize(
    "line",
    [
        "docker run -d --rm 198.51.100.23:5000/tools/sync:latest",
        "podman pull 198.51.100.23/base",
        "kubectl run probe --image=198.51.100.23:5000/probe -n web",
        "kubectl set image deploy/web web=198.51.100.23/web:2",
        "helm upgrade --install cache oci://198.51.100.23/charts/cache",
    ],
)
def test_an_image_or_chart_from_a_bare_public_address_is_a_registry(line: str) -> None:
    assert "registry" in {act["kind"] for act in shell_acts(line)}, shell_acts(line)


@pytest.mark.parametrize(
    "line",
    [
        "docker run -d localhost:5001/web:dev",
        "kubectl set image deploy/web web=192.168.49.2:5000/web:dev",
        "kubectl set image deploy/web web=ghcr.io/acme/web:1.4.2",
        "helm install cache oci://registry-1.docker.io/bitnamicharts/redis",
        "kubectl annotate svc web allowed-from=198.51.100.0/24",
        "docker run --add-host db:198.51.100.7 -p 8080:80 nginx",
    ],
)
def test_named_local_and_private_registries_and_cidrs_are_no_image_source(line: str) -> None:
    assert "registry" not in {act["kind"] for act in shell_acts(line)}, shell_acts(line)
