"""The harness-neutral hook: the payloads a harness sends and the verdict and reply we send back
(:mod:`.messages`), one tool vocabulary for every harness (:mod:`.vocabulary`), and from a payload
to a decision (:mod:`.events`). Nothing here knows how one harness spells an answer.

Empty on purpose: importing a module from here must not import its siblings."""
