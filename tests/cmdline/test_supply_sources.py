# ruff: noqa: E501  (tables of file texts read better unwrapped)
"""Installs from outside the official, verified channel (cmdline/effects/sources.py): system
package managers without signature checks, Homebrew taps given their own remote and formula
files, editor extensions side-loaded from a file or URL, and the public index added next to a configured one.
Spellings are this project's own; each class has look-alikes that must stay without the effect."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import later_risks, shell_acts


def _acts(line: str) -> list[tuple[str, str]]:
    return [(e["kind"], e["target"]) for e in shell_acts(line) if e["kind"] in ("registry", "tls-off")]


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("apt install --allow-unauthenticated ./vendor-agent_2.1_amd64.deb", "tls-off"),
        ("sudo apt-get -y --allow-insecure-repositories update", "tls-off"),
        ("apt-get install -o APT::Get::AllowUnauthenticated=true -y build-helper", "tls-off"),
        ("sudo dnf install --nogpgcheck -y https://rpms.example.net/tool-1.0.rpm", "tls-off"),
        ("yum --setopt=myrepo.gpgcheck=0 install fastsync", "tls-off"),
        ("zypper --no-gpg-checks install agent", "tls-off"),
        ("rpm -ivh --nosignature tool.rpm", "tls-off"),
        ("apk add --allow-untrusted ./pkg.apk", "tls-off"),
        ("brew tap acme/devtools https://git.example.org/acme/homebrew-devtools.git", "registry"),
        ("brew install --cask https://raw.example.net/casks/helper.rb", "registry"),
        ("brew install ./Formula/helper.rb", "registry"),
        ("code --install-extension /tmp/dl/eslint-helper-3.2.0.vsix", "registry"),
        ("cursor --install-extension=https://files.example.net/ext/theme.vsix", "registry"),
        ("windsurf --install-extension ms-python-2025.1.vsix --force", "registry"),
        ("codium --install-extension ./build/ext.vsix", "registry"),
        ("pip3 install --extra-index-url=https://pypi.org/simple/ corp-billing-client", "registry"),
        ("uv pip install --extra-index-url https://pypi.python.org/simple internal-auth", "registry"),
    ],
)
def test_outside_the_verified_channel(line: str, kind: str) -> None:
    assert kind in [k for k, _ in _acts(line)], line


@pytest.mark.parametrize(
    "line",
    [
        "sudo apt-get install -y build-essential",
        "apt-get -o Dpkg::Options::=--force-confold upgrade -y",
        "dnf install -y --setopt=install_weak_deps=False gcc",
        "brew install jq",
        "brew tap hashicorp/tap && brew install hashicorp/tap/packer",
        "brew tap homebrew/cask-fonts",
        "brew install homebrew/cask/firefox",
        "brew install --cask visual-studio-code",
        "code --install-extension ms-python.python",
        "cursor --install-extension esbenp.prettier-vscode@11.0.0",
        "code --list-extensions",
        "pip install -r requirements.txt",
        "pip install --extra-index-url https://download.pytorch.org/whl/cu121 torch",
    ],
)
def test_official_channels_stay_clean(line: str) -> None:
    assert not [t for k, t in _acts(line) if "://" not in t or "pypi.org" in t], _acts(line)


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("requirements-dev.txt", "--index-url https://pkgs.example.net/simple/\npytest==8.3.3\n"),
        ("requirements/base.in", "django>=5.0\n--extra-index-url=https://pypi.org/simple\nacme-sso\n"),
        ("constraints.txt", "-f ./wheels\nnumpy==2.1.0\n"),
        ("requirements.txt", "--trusted-host mirror.example.org\nrequests\n"),
        ("pyproject.toml", '[project]\nname = "x"\n\n[[tool.uv.index]]\nname = "corp"\nurl = "http://10.1.2.3:8080/simple"\n'),
        ("pyproject.toml", '[[tool.poetry.source]]\nname = "mirror"\nurl = "https://pypi-mirror.example.com/simple/"\n'),
        ("Gemfile", 'source "https://gems.example.net"\ngem "rails"\n'),
    ],
)
def test_dependency_files_naming_another_index(path: str, text: str) -> None:
    assert set(later_risks(path, text)) & {"index-swap", "tls-off"}, (path, text)


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("requirements.txt", "flask==3.0.3\nsqlalchemy>=2.0\n"),
        ("requirements-gpu.txt", "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.4.1\n"),
        ("requirements.txt", "--index-url https://pypi.org/simple\nhttpx\n"),
        ("pyproject.toml", '[project]\nname = "x"\n[project.urls]\nHomepage = "https://example.org"\n[tool.coverage.run]\nsource = ["src"]\n[tool.docs]\nurl = "https://docs.example.org"\n'),
        ("Gemfile", 'source "https://rubygems.org"\ngem "rails", "~> 7.1"\n'),
    ],
)
def test_dependency_files_with_the_default_index_stay_clean(path: str, text: str) -> None:
    assert later_risks(path, text) == [], (path, text)


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (".github/workflows/pr.yml", "jobs:\n  diff:\n    steps:\n      - uses: tj-actions/changed-files@v44.5.2\n"),
        (".github/workflows/pr.yml", "      - name: files\n        uses: 'TJ-Actions/changed-files@v41'\n"),
        (".github/actions/lint/action.yml", "runs:\n  using: composite\n  steps:\n    - uses: reviewdog/action-setup@v1.3.0\n"),
        (".github/workflows/review.yml", "    steps:\n      - uses: reviewdog/action-setup@master\n"),
    ],
)
def test_actions_through_repointed_tags(path: str, text: str) -> None:
    assert "compromised-action" in later_risks(path, text), text


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (".github/workflows/pr.yml", "      - uses: tj-actions/changed-files@v46\n"),
        (".github/workflows/pr.yml", "      - uses: tj-actions/changed-files@v46.0.5\n"),
        (".github/workflows/pr.yml", "      - uses: tj-actions/changed-files@ed68ef82c095e0d48ec87eccea555d944a631a4c # v46\n"),
        (".github/workflows/review.yml", "      - uses: reviewdog/action-setup@e04ffabe3898a0af8d0fb1af00c188831c4b5893\n"),
        (".github/workflows/ci.yml", "      - uses: actions/checkout@v4\n      - uses: dorny/paths-filter@v3\n"),
    ],
)
def test_actions_pinned_or_clean_stay_clean(path: str, text: str) -> None:
    assert "compromised-action" not in later_risks(path, text), text
