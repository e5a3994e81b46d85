"""OpenCode: the plugin that carries its tool calls to ``dsh-policy hook opencode``
(``dsh-policy.js``), how we answer it (:mod:`.dialect`), and installing the plugin (:mod:`.plugin`)."""
