"""The ``pos`` preset, and variants of it made by adding templates."""

from __future__ import annotations

from cseq.templates import PRESETS

#: The ``pos`` preset's template text.
POS = PRESETS["pos"]


def plus(*lines: str) -> str:
    """The pos preset with the template ``lines`` added before its bias."""
    return POS.replace("U99:bias", "\n".join(lines) + "\nU99:bias")
