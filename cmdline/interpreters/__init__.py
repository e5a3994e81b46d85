"""What code handed to a script interpreter would do: the commands it runs, the files it deletes,
the hosts it connects to, the directories it serves.

``python -c '...'``, ``node -e '...'``, ``perl -e '...'``, an awk program or a here-document fed to
``python3 -`` is opaque to a shell parser, and it is the usual way to smuggle ``rm -rf ~`` or a
reverse shell past one. This module reads such code lexically (never runs it) in the languages
agents reach for: Python, JavaScript (node, deno, bun), Ruby, Perl, PHP, Lua, R, awk, sed,
AppleScript and Tcl/expect. It finds:

- **shell-outs**: ``os.system("...")``, ``subprocess.run([...])``, ``execSync("...")``,
  ``system "..."``, backticks, ``%x{...}``, ``qx(...)``, ``os.execute``, awk ``system()`` and
  ``"cmd" | getline``, sed's ``e`` command, ``do shell script``; a string argument is a shell line,
  a list argument an argv. :mod:`~dsh_policy.cmdline.shell` lists their commands like those of
  ``bash -c``, so every shell rule applies to them;
- **effects** done through the language's own API, as ``{"kind", "lang", "target"}`` maps:
  ``delete`` (``os.remove``, ``fs.unlinkSync``, ``unlink``...), ``delete-tree`` (``shutil.rmtree``,
  ``fs.rmSync(.., {recursive: true})``, ``FileUtils.rm_rf``, ``remove_tree``...), ``connect``
  (sockets, HTTP clients: the target is the host or URL when the code names it), ``shell`` (an
  interactive shell: ``pty.spawn("/bin/sh")``, ``exec "/bin/sh"``), ``reverse-shell`` (a
  connection and a shell or descriptor duplication in the same code) and ``serve`` (``python -m
  http.server``, ``php -S``, ``ruby -run -e httpd``: the target is the directory served, ``bind``
  the address), ``read``/``write`` (``open()``, ``fs.readFileSync``, ``File.read``,
  ``file_get_contents``...) and ``sql`` (SQL handed to a driver, ``cursor.execute("DROP ...")``,
  and ORM bulk deletes such as ``User.objects.all().delete()`` as the ``DELETE FROM`` they are).

Targets are spelled like shell words so the shell rules' patterns apply: a string literal is its
text, ``os.path.expanduser("~")``/``Path.home()``/``os.homedir()``/``Dir.home`` is ``~``,
``os.environ["HOME"]``/``process.env.HOME``/``$ENV{HOME}`` is ``$HOME``, ``os.getcwd()``/
``process.cwd()``/``__dirname`` is ``.``, concatenation (``+``, ``.``, ``os.path.join``) joins the
parts, names assigned earlier in the same code take their value, and anything else is ``$__``
(an unresolved value, like an unset shell variable). Work is linear in the code and bounded by the
shell module's limits; nothing here raises for odd input.
"""

from __future__ import annotations

from dsh_policy.cmdline.interpreters.effects import analyze
from dsh_policy.cmdline.interpreters.invocation import (
    Invocation,
    code_words,
    interpreter_of,
    split_invocation,
)
from dsh_policy.cmdline.interpreters.model import UNKNOWN, CodeAnalysis

__all__ = [
    "UNKNOWN",
    "CodeAnalysis",
    "Invocation",
    "analyze",
    "code_words",
    "interpreter_of",
    "split_invocation",
]
