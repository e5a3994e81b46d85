"""Keeping secrets out of what a harness shows the model: refusing or rewriting calls that would
print one (:mod:`.secret_reads`, :mod:`.secret_greps`) and reviewing output chunk by chunk
(:mod:`.output_review`, which the resident gateway and the ``redact-output`` filter,
:mod:`..gateway.output_filter`, both call).

Empty on purpose: importing a module from here must not import its siblings."""
