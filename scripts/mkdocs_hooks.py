"""MkDocs hooks for cseq's documentation site (``hooks:`` in ``mkdocs.yml``).

``<!-- cseq-help -->`` and ``<!-- cseq-help: COMMAND -->`` in a page become
the ``--help`` text of ``cseq`` and of ``cseq COMMAND``, taken from the
argument parser of the installed ``cseq.cli`` when the site is built, at a
fixed width of 88 columns.  ``mkdocs build --strict`` fails on a marker that
names no command, so the CLI reference always matches the code.
"""

from __future__ import annotations

import argparse
import os
import re
from typing import Any

MARKER = re.compile(r"^<!-- cseq-help(?::\s*([\w-]+))?\s*-->$", re.M)


def _help_texts() -> dict[str | None, str]:
    from cseq import cli

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"  # argparse reads the width from here
    try:
        parser = cli._parser()
        texts: dict[str | None, str] = {None: parser.format_help()}
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    texts[name] = sub.format_help()
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return texts


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if not MARKER.search(markdown):
        return markdown
    texts = _help_texts()

    def replace(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in texts:
            raise ValueError(f"{page.file.src_path}: no cseq command {name!r} "
                             f"(known: {sorted(k for k in texts if k)})")
        return "```text\n" + texts[name].rstrip() + "\n```"

    return MARKER.sub(replace, markdown)
