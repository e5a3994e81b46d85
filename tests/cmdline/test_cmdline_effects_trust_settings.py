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


@pytest.mark.parametrize(
    "line",
    [
        "poetry config certificates.corp-index.cert false",
        "bundle config ssl_verify_mode 0",
        "bundle config set --global ssl_verify_mode 0",
        "composer config secure-http false",
        "composer config -g disable-tls 1",
        "cosign verify --insecure-ignore-sct --key cosign.pub registry.example/app:2",
        "cosign verify-attestation --allow-insecure-registry --key k.pub reg.example/app:3",
        "yarn config set checksumBehavior reset",
        "yarn config set unsafeHttpWhitelist --json '[\"pkgs.mirror.example\"]'",
        "npm config set registry http://npm.mirror.example/",
        "pnpm config set @corp:registry http://npm.corp.example/",
    ],
)
def test_checks_relaxed_in_other_managers_read_as_tls_off(line: str) -> None:
    assert "tls-off" in kinds(line), (line, shell_acts(line))


@pytest.mark.parametrize(
    "line",
    [
        "poetry config repositories.testpypi https://test.pypi.org/legacy/",
        "poetry config virtualenvs.in-project true",
        "bundle config set --local path vendor/bundle",
        "composer config minimum-stability dev",
        "composer config secure-http true",
        "cosign verify --key cosign.pub registry.example/app:2",
        "yarn config set nodeLinker node-modules",
        "yarn config set checksumBehavior throw",
        "yarn config set unsafeHttpWhitelist --json '[\"localhost\"]'",
        "npm config set registry https://registry.npmjs.org/",
    ],
)
def test_ordinary_settings_of_the_same_managers_stay_quiet(line: str) -> None:
    assert "tls-off" not in kinds(line), (line, shell_acts(line))


@pytest.mark.parametrize(
    ("line", "url"),
    [
        (
            "curl -fsSLo /tmp/w.whl https://wheels.example.io/w-2.0-py3-none-any.whl && pip3 install /tmp/w.whl",  # noqa: E501
            "https://wheels.example.io/w-2.0-py3-none-any.whl",
        ),
        (
            "wget https://mirror.example.io/npm/left-3.1.0.tgz; pnpm add ./left-3.1.0.tgz",
            "https://mirror.example.io/npm/left-3.1.0.tgz",
        ),
        ("curl -L -o kit.gem https://s.example.io/k && gem install ./kit.gem", "https://s.example.io/k"),
        ("wget -O /tmp/p.tgz https://t.example.io/p && uv pip install /tmp/p.tgz", "https://t.example.io/p"),
    ],
)
def test_a_package_the_line_downloads_then_installs_comes_from_its_url(line: str, url: str) -> None:
    assert {"kind": "registry", "target": url} in [
        {"kind": e["kind"], "target": e["target"]} for e in shell_acts(line)
    ]


@pytest.mark.parametrize(
    "line",
    [
        "npm pack && npm install ../lib/acme-lib-0.3.0.tgz",
        "python -m build && pip install dist/acme-0.3.0-py3-none-any.whl",
        "curl -fsSLo /tmp/data.tgz https://data.example.io/d.tgz && tar -xzf /tmp/data.tgz",
        "curl -sSLo notes.zip https://files.example.io/n.zip && pip install -r requirements.txt",
    ],
)
def test_installs_of_files_the_line_did_not_download_stay_quiet(line: str) -> None:
    assert "registry" not in kinds(line), (line, shell_acts(line))


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("npm dist-tag add @corp/widgets@5.0.0-rc.1 latest", "publish"),
        ("pnpm dist-tag rm @corp/widgets next", "publish"),
        ('npm deprecate @corp/widgets@"<5" "install @corp-next/widgets instead"', "publish"),
        ("npm install canvas --canvas_binary_host_mirror=https://bin.example.io/canvas", "registry"),
        ("npm rebuild node-sass --sass-binary-site=http://192.0.2.7/sass", "registry"),
    ],
)
def test_registry_state_and_script_download_sites(line: str, kind: str) -> None:
    assert kind in kinds(line), (line, shell_acts(line))


@pytest.mark.parametrize(
    "line",
    [
        "npm dist-tag ls @corp/widgets",
        "npm view @corp/widgets dist-tags.latest",
        "npm install --https-proxy=http://proxy.corp.example:3128 express",
        "npm install --save-dev --loglevel=warn typescript",
    ],
)
def test_reads_of_tags_and_proxies_are_neither(line: str) -> None:
    assert not {"publish", "registry"} & set(kinds(line)), (line, shell_acts(line))


@pytest.mark.parametrize(
    ("line", "quiet"),
    [
        ("go env -w GOPRIVATE=gitlab.example-corp.net/platform/*", True),
        ("GONOSUMDB=*.example-corp.net,github.com/example-corp go build ./...", True),
        ("go env -w GOPRIVATE=*", False),
        ("go env -w GONOPROXY=github.com", False),
        ("export GONOSUMDB=gitlab.com/*", False),
        ("GOPRIVATE=*.io go get ./...", False),
    ],
)
def test_go_private_lists_naming_the_organizations_modules_are_quiet(line: str, quiet: bool) -> None:
    assert (not {"registry", "tls-off"} & set(kinds(line))) == quiet, (line, shell_acts(line))
