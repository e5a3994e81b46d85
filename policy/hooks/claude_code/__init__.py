"""Claude Code: how it reads a command hook's answer and how we spell each verdict for it
(:mod:`.dialect`).

Empty on purpose: importing a module from here must not import its siblings."""
