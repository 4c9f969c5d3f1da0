"""The built-in template presets as the featurizer kernel tests use them.

The ``pos`` preset's ``:tags`` templates learn from labels (cseq.features.tagdict),
so ``fit_transform`` needs ``y`` and its training features are jackknifed;
``tests/features/test_tagdict.py`` checks those against an independent reference.  The
tests of the compiled path on plain columns use the presets without those
lines: the same C path, which sees a ``tags`` cell as one more column.
"""

from cseq.templates import PRESETS

#: Each preset's text without its ``:tags`` lines.
UNTAGGED = {name: "\n".join(line for line in text.splitlines() if ":tags]" not in line)
            for name, text in PRESETS.items()}
