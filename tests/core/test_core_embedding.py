"""The embedding example in ``dsh_policy.core``'s docstring runs as written."""

from __future__ import annotations

import contextlib
import io
import textwrap

import dsh_policy.core as core


def test_the_package_docstring_example_runs_and_denies_rm() -> None:
    doc = core.__doc__ or ""
    code = textwrap.dedent(doc[doc.index("Embedding::") + len("Embedding::") : doc.index("Seams (")])
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(code, "<dsh_policy.core docstring>", "exec"), {})
    assert output.getvalue().strip().startswith("['turn/start', 'step/start', 'user/message'")
    assert output.getvalue().strip().endswith("'turn/end']")


def test_every_exported_name_exists_and_is_documented() -> None:
    for name in core.__all__:
        value = getattr(core, name)
        if callable(value) or isinstance(value, type):
            assert (value.__doc__ or "").strip(), f"{name} has no docstring"


def test_importing_core_is_lazy_but_every_public_name_resolves() -> None:
    """A hook process that needs only ``core.frozen`` must not load the loop; every name in
    ``__all__`` still imports on first use."""
    import subprocess
    import sys

    probe = (
        "import sys, dsh_policy.core.frozen; "
        "print('dsh_policy.core.agent' in sys.modules, 'jsonschema' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]
    import dsh_policy.core as core

    for name in core.__all__:
        assert getattr(core, name) is not None, name
