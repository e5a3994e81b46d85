"""Registry swaps and TLS switches spelled as environment variables (every package manager's
naming convention, any case npm accepts) and as the config verbs of pdm, dotnet and Maven; and
install scripts added with npm 7's set-script."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import shell_acts


def kinds(line: str) -> list[str]:
    return [e["kind"] for e in shell_acts(line)]


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("npm_config_registry=https://npm.mirror.example npm ci", "registry"),
        ("export NPM_CONFIG_REGISTRY=https://npm.mirror.example", "registry"),
        ("env npm_config_strict_ssl=false pnpm install", "tls-off"),
        ("UV_INDEX=https://py.mirror.example/simple uv sync", "registry"),
        ("UV_INSECURE_HOST=py.mirror.example uv pip install flask", "tls-off"),
        ("export PIP_FIND_LINKS=https://wheels.mirror.example/", "registry"),
        ("POETRY_REPOSITORIES_CORP_URL=https://py.mirror.example poetry lock", "registry"),
        ("BUNDLE_MIRROR__RUBYGEMS__ORG=https://gems.mirror.example bundle install", "registry"),
        ("CARGO_HTTP_CHECK_REVOKE=false cargo fetch", "tls-off"),
        ("CONDA_SSL_VERIFY=no conda install numpy", "tls-off"),
        ("export YARN_NPM_REGISTRY_SERVER='https://npm.mirror.example'", "registry"),
        ('NODE_TLS_REJECT_UNAUTHORIZED="0" node build.js', "tls-off"),
        ("GOSUMDB=off go mod tidy", "tls-off"),
        ("pdm config pypi.url https://py.mirror.example/simple", "registry"),
        ("pdm config pypi.verify_ssl false", "tls-off"),
        ("dotnet nuget add source https://nuget.mirror.example/v3/index.json -n corp", "registry"),
        ("mvn -Dmaven.wagon.http.ssl.insecure=true -Dmaven.wagon.http.ssl.allowall=true package", "tls-off"),
        ("npm set-script preinstall 'node tools/setup.js'", "runs-later-config"),
    ],
)
def test_each_setting_reads_as_its_effect(line: str, kind: str) -> None:
    assert kind in kinds(line), (line, shell_acts(line))


@pytest.mark.parametrize(
    "line",
    [
        "npm_config_loglevel=warn npm ci",
        "npm_config_strict_ssl=true npm ci",
        "NODE_ENV=production node server.js",
        "PIP_DISABLE_PIP_VERSION_CHECK=1 pip install -r requirements.txt",
        "UV_CACHE_DIR=/tmp/uv uv sync",
        "CARGO_HTTP_CHECK_REVOKE=true cargo build",
        "export GOFLAGS=-mod=mod",
        "go env GOPROXY",
        "pdm config python.use_venv true",
        "dotnet nuget list source",
        "mvn -DskipTests package",
        "npm set-script test 'vitest run'",
    ],
)
def test_everyday_settings_have_no_trust_effect(line: str) -> None:
    assert not {"registry", "tls-off", "runs-later-config"} & set(kinds(line)), (line, shell_acts(line))
