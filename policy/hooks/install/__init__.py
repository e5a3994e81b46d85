"""Installing hooks and checking an installation: the settings files ``dsh-policy init`` writes
(:mod:`.settings_files`) and ``dsh-policy doctor``'s checks (:mod:`.doctor`, with
:mod:`.doctor_codex` and :mod:`.doctor_http`).

Empty on purpose: importing a module from here must not import its siblings."""
