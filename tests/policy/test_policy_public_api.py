"""The curated API: every public name resolves from ``dsh_policy.policy`` lazily, and the names the
0.1 README showed under their old module paths still import for one release."""

from __future__ import annotations

import json
import subprocess
import sys

import dsh_policy.policy as api


def test_every_exported_name_resolves_and_is_listed() -> None:
    assert sorted(api.__all__) == sorted(api._EXPORTS)
    for name in api.__all__:
        assert getattr(api, name) is not None, name


def test_importing_the_api_loads_nothing_until_a_name_is_used() -> None:
    probe = (
        "import json, sys\nimport dsh_policy.policy\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('dsh_policy'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["dsh_policy", "dsh_policy.policy"]


def test_the_old_module_paths_of_the_readme_still_import() -> None:
    from dsh_policy.policy.auditing import DecisionAuditor
    from dsh_policy.policy.gateway import PolicyGateway

    assert PolicyGateway is api.PolicyGateway
    assert DecisionAuditor is api.DecisionAuditor
