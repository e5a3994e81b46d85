"""Command hooks for coding-agent harnesses (Claude Code, Codex), one folder per concern:

- ``protocol/``: the harness-neutral hook: payloads, verdicts and replies, the canonical tool
  vocabulary, and from an event to a decision;
- ``claude_code/``, ``codex/``: one folder per harness: how it reads our answers, and anything
  only that harness needs (Codex's managed hooks and hook trust). A new harness gets a folder
  beside them and a line in :mod:`.dialects`;
- ``gateway/``: the resident gateway of a deployment, the fast client every hook event runs, and
  the hook audit records;
- ``install/``: the settings ``dsh-policy init`` writes and ``dsh-policy doctor``'s checks;
- :mod:`.harness_files`: reading and atomically rewriting a harness's own files (install and
  codex/ share it);
- ``review/``: keeping secrets out of the output a harness shows the model.

Every ``__init__`` here stays free of imports: the fast hook client imports only the modules it
names, on every tool call."""
