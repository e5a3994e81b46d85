"""Registry swaps and TLS switches spelled as settings rather than flags: environment variables
on a command line or exported, and the config verbs of the package managers ``acts`` does not
read itself (pdm, dotnet nuget, Maven's system properties).

Package managers read their whole configuration from the environment under a naming convention
(npm and pnpm: ``npm_config_<key>`` in any case; pip: ``PIP_<OPTION>``; uv, pdm, poetry, cargo,
bundler, conda, yarn: their own prefixes), so an exported variable swaps a registry or turns TLS
off exactly as a config file does. The table names each setting by what it does; a new tool's
variable is one line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["TRUST_HANDLERS", "env_switch_acts", "narrow_go_private"]

_REGISTRY_VARIABLES = lazy_compile(
    r"(?i:npm_config_registry|npm_config_[\w-]*_registry)$"
    r"|^(?:YARN_NPM_REGISTRY_SERVER|YARN_REGISTRY|PIP_INDEX_URL|PIP_EXTRA_INDEX_URL|PIP_FIND_LINKS"
    r"|UV_INDEX|UV_INDEX_URL|UV_EXTRA_INDEX_URL|UV_DEFAULT_INDEX|UV_FIND_LINKS|PDM_PYPI_URL"
    r"|POETRY_REPOSITORIES_\w+_URL|GOPROXY|CARGO_REGISTRIES_\w+_INDEX|CARGO_SOURCE_\w+_REPLACE_WITH"
    r"|BUNDLE_MIRROR__\w+|CONDA_CHANNELS|CONDA_CHANNEL_ALIAS|CONDA_DEFAULT_CHANNELS|PUB_HOSTED_URL"
    r"|HEX_MIRROR)$"
)
"""Variables that name where packages come from (any non-empty value swaps the source)."""

_TLS_OFF_WHEN_FALSE = lazy_compile(
    r"(?i:npm_config_strict_ssl)$|^(?:YARN_ENABLE_STRICT_SSL|YARN_STRICT_SSL|CONDA_SSL_VERIFY"
    r"|CARGO_HTTP_CHECK_REVOKE|BUNDLE_SSL_VERIFY_MODE|NODE_TLS_REJECT_UNAUTHORIZED|PYTHONHTTPSVERIFY"
    r"|POETRY_CERTIFICATES_\w+_CERT|HTTPIE_VERIFY|UV_NATIVE_TLS_VERIFY)$"
)
"""Verification switches: a false value turns certificate checks off."""

_TLS_OFF_WHEN_SET = lazy_compile(
    r"^(?:GIT_SSL_NO_VERIFY|PIP_TRUSTED_HOST|UV_INSECURE_HOST|GOINSECURE|GONOSUMDB|GONOSUMCHECK"
    r"|GOPRIVATE|GONOPROXY)$"
)
"""Variables whose mere presence exempts hosts or modules from verification."""

_ASSIGNMENT = lazy_compile(
    r"(?:^|[\s;&|(])(?:export\s+|env\s+(?:-\S+\s+)*|set\s+-x\s+|declare\s+-x\s+)?"
    r"([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s;&|)]*)"
)
_FALSE = lazy_compile(r"(?i)^(?:false|0|no|off|none)$")
_TRUE = lazy_compile(r"(?i)^(?:true|1|yes|on)$")


_PUBLIC_MODULE_HOSTS = frozenset(
    {
        "github.com",
        "gitlab.com",
        "bitbucket.org",
        "golang.org",
        "go.googlesource.com",
        "gopkg.in",
        "go.uber.org",
    }
)


_GO_PRIVATE_VARIABLES = frozenset({"GOPRIVATE", "GONOPROXY", "GONOSUMDB"})


def narrow_go_private(name: str, value: str) -> bool:
    """Whether ``name`` is GOPRIVATE, GONOPROXY or GONOSUMDB and its list names only the
    organization's own modules: each pattern an owner path on a public code host
    (``github.com/acme-corp/*``) or a host that is not a public one (``git.corp.example``,
    ``*.corp.example``), Go's documented set-up for private modules. ``*``, a wildcard host or a
    whole public host takes the world's modules out of the checksum database, and stays a trust
    change."""
    if name not in _GO_PRIVATE_VARIABLES:
        return False
    patterns = [p.strip() for p in value.split(",") if p.strip()]
    if not patterns:
        return False
    for pattern in patterns:
        host, _, rest = pattern.partition("/")
        # Go's own example, `*.corp.example.com`: every subdomain of the organization's domain
        host = host[2:] if host.startswith("*.") else host
        if "*" in host or "?" in host or "." not in host:
            return False
        owner = rest.split("/", 1)[0]
        if host.lower() in _PUBLIC_MODULE_HOSTS and (not owner or any(c in owner for c in "*?[")):
            return False
    return True


def env_switch_acts(line: str) -> Iterator[Effect]:
    """The registry and TLS effects of the variables a line assigns or exports."""
    for match in _ASSIGNMENT.finditer(line):
        name, raw = match.group(1), match.group(2)
        value = raw[1:-1] if raw[:1] in ("'", '"') else raw
        if _REGISTRY_VARIABLES.search(name) and value:
            yield _fx("registry", f"sets {name}", value)
        elif (
            (_TLS_OFF_WHEN_FALSE.search(name) and _FALSE.match(value))
            or (_TLS_OFF_WHEN_SET.match(name) and value and not narrow_go_private(name, value))
            or (name == "GOSUMDB" and value == "off")
            or (name == "GOFLAGS" and "insecure" in value)
            or (name in ("CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE") and raw in ('""', "''"))
        ):
            yield _fx("tls-off", f"sets {name}", value)


def _pdm(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:1] != ["config"] or len(words) < 3:
        return
    if re.match(r"^pypi\.(?:[\w-]+\.)?url$", words[1]):
        yield _fx("registry", f"pdm config {words[1]}", words[2])
    elif re.match(r"^pypi\.(?:[\w-]+\.)?verify_ssl$", words[1]) and _FALSE.match(words[2]):
        yield _fx("tls-off", f"pdm config {words[1]}", words[1])


def _dotnet(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:3] == ["nuget", "add", "source"] or words[:3] == ["nuget", "update", "source"]:
        yield _fx("registry", "dotnet adds a NuGet source", next((w for w in words[3:] if "://" in w), ""))


def _java_build(argv: list[str]) -> Iterator[Effect]:
    for arg in argv[1:]:
        if re.match(r"^-Dmaven\.wagon\.http\.ssl\.(?:insecure|allowall|ignore\.validity\.dates)=true$", arg):
            yield _fx("tls-off", f"{argv[0]} without certificate checks", arg)
            return


def _poetry_config(argv: list[str]) -> Iterator[Effect]:
    # `poetry config certificates.<repo>.cert false`: the repository's certificate is not checked
    # (`repositories.<name>` are upload targets, not install sources: left to the publish readers)
    words = _words(argv)
    if (
        words[:1] == ["config"]
        and len(words) >= 3
        and re.match(r"^certificates\.[\w-]+\.cert$", words[1])
        and _FALSE.match(words[2])
    ):
        yield _fx("tls-off", f"poetry config {words[1]}", words[1])


def _bundle_config(argv: list[str]) -> Iterator[Effect]:
    # `bundle config [set] [--global|--local] ssl_verify_mode 0` (OpenSSL's VERIFY_NONE)
    words = _words(argv)
    if words[:1] != ["config"]:
        return
    words = words[2:] if words[1:2] == ["set"] else words[1:]
    if len(words) >= 2 and words[0].lower() == "ssl_verify_mode" and words[1] == "0":
        yield _fx("tls-off", "bundle config ssl_verify_mode 0", words[0])


def _composer_config(argv: list[str]) -> Iterator[Effect]:
    # `composer config [-g] secure-http false` allows http:// package URLs; `disable-tls true`
    # turns TLS off altogether
    words = _words(argv)
    if words[:1] != ["config"] or len(words) < 3:
        return
    key, value = words[1].lower(), words[2]
    if (key == "secure-http" and _FALSE.match(value)) or (key == "disable-tls" and _TRUE.match(value)):
        yield _fx("tls-off", f"composer config {key} {value}", key)


_SIGNATURE_CHECKS_OFF = lazy_compile(
    r"^--(?:insecure-ignore-tlog|insecure-ignore-sct|insecure-skip-verify|allow-insecure-registry"
    r"|allow-http-registry|insecure-ignore-tsa)(?:=(?:true|1))?$"
)


def _sigstore(argv: list[str]) -> Iterator[Effect]:
    # a cosign or sigstore check that skips the transparency log, the certificate timestamp or
    # the registry's TLS proves less than it reports: an artifact signed by a stolen key, outside
    # the log, passes
    off = next((a for a in argv[1:] if _SIGNATURE_CHECKS_OFF.match(a)), None)
    if off is not None:
        yield _fx("tls-off", f"{argv[0]} with its checks relaxed ({off})", off)


TRUST_HANDLERS = {
    "poetry": _poetry_config,
    "bundle": _bundle_config,
    "bundler": _bundle_config,
    "composer": _composer_config,
    "cosign": _sigstore,
    "sigstore": _sigstore,
    "pdm": _pdm,
    "dotnet": _dotnet,
    "nuget": _dotnet,
    **dict.fromkeys(("mvn", "mvnw", "gradle", "gradlew"), _java_build),
}
"""The config readers by program name (argv[0] basename)."""
