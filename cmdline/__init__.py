"""Command-line readers: what a shell line, interpreter code, SQL text or an infrastructure CLI's
argv would do, read as text and never executed.

The readers are shared by the CEL helpers (``policy/cel/functions.py`` binds them as
``shell.commands``, ``shell.cli``, ``sql.statements``, ...) and by self-protection, which reads
every shell call for tampering. They import no CEL library and nothing of ``dsh_policy.policy``
(``tests/cmdline/test_cmdline_independent.py`` checks it), so a reader can be tested, fuzzed and
reused on its own.

Modules: ``shell/`` (the POSIX shell reader: lexer, expansion, wrapper tables, unwrapping),
``interpreters`` (code handed to python/node/perl/awk/...), ``sql`` (SQL, MongoDB and redis
statements), ``cli_grammars`` (kubectl, aws, terraform, ... argument grammars), ``programs`` (the
one table of what programs do: which only read, which act on whole folders, ...), ``deadline``
(the time budget a caller sets and every reader honours) and ``lazy_regex`` (the readers' patterns,
compiled on first use rather than at import).
"""
