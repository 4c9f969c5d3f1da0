"""Griffe extension for cseq's documentation site (``mkdocs.yml``).

cseq's docstrings are numpydoc, written for Sphinx: they cross-reference with
roles such as ``:class:`StructuredPerceptron``` and ``:func:`cseq.viterbi```.
Markdown has no roles, so the API reference would print ``:class:`` before
every name; this turns each role into a plain code span.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|c:func|c:type):`~?([^`]+)`")


class SphinxRoles(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(r"`\1`", obj.docstring.value)
