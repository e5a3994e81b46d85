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
