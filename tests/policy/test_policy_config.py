"""The kind: Gateway deployment file: validated with positions, paths relative to the file, and
flags taking precedence over it."""

from __future__ import annotations

from pathlib import Path

from dsh_policy.policy.config import GatewayConfig, load_gateway_config, policy_sources

GATEWAY = """\
apiVersion: dsh-policy/v1
kind: Gateway
metadata: {name: prod}
spec:
  packs: [packs/a.yaml, /abs/b.yaml]
  params: {max_turns: 20}
  engine: python
  shadow: true
  audit:
    path: logs/audit.jsonl
    fsync: always
    checkpoint_key: keys/ck.key
    fail_closed: true
    rotate_bytes: 1048576
"""


def test_paths_resolve_against_the_file_and_settings_are_typed(tmp_path: Path) -> None:
    file = tmp_path / "gateway.yaml"
    file.write_text(GATEWAY)
    config = load_gateway_config(file)
    assert isinstance(config, GatewayConfig)
    assert config.packs == (str(tmp_path / "packs/a.yaml"), "/abs/b.yaml")
    assert (config.name, config.engine, config.shadow, dict(config.params)) == (
        "prod",
        "python",
        True,
        {"max_turns": 20},
    )
    assert config.audit is not None
    assert config.audit.path == str(tmp_path / "logs/audit.jsonl")
    assert config.audit.checkpoint_key == str(tmp_path / "keys/ck.key")
    assert (config.audit.fsync, config.audit.fail_closed, config.audit.rotate_bytes) == (
        "always",
        True,
        1048576,
    )
    assert (config.param_origins["max_turns"].line, config.param_origins["max_turns"].col) == (6, 12)


def test_unknown_keys_and_bad_values_are_reported_with_positions(tmp_path: Path) -> None:
    file = tmp_path / "gateway.yaml"
    file.write_text(
        GATEWAY.replace("fsync: always", "fsnyc: always").replace("engine: python", "engine: fast")
    )
    errors = load_gateway_config(file)
    assert isinstance(errors, list)
    assert [str(error).removeprefix(str(tmp_path) + "/") for error in errors] == [
        "gateway.yaml:7:11: spec.engine: 'fast' is not one of auto, closure, python, native",
        "gateway.yaml:11:5: spec.audit: unknown key 'fsnyc' (did you mean 'fsync'?)",
    ]


def test_flags_win_over_the_file_and_packs_add_up(tmp_path: Path) -> None:
    file = tmp_path / "gateway.yaml"
    file.write_text(GATEWAY)
    sources = policy_sources(["extra.yaml"], config=str(file), param_flags=["max_turns=5"], engine="auto")
    assert not isinstance(sources, list)
    assert sources.packs == (str(tmp_path / "packs/a.yaml"), "/abs/b.yaml", "extra.yaml")
    assert dict(sources.params) == {"max_turns": 5}
    assert sources.param_origins["max_turns"].file == "--param"
    assert (sources.engine, sources.shadow) == ("auto", True)
    assert str(file) in sources.watched


def test_no_packs_at_all_is_an_error() -> None:
    errors = policy_sources([])
    assert isinstance(errors, list) and "no rule packs given" in errors[0].message
