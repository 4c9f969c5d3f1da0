"""UDPipe 1 (``ufal.udpipe``) trained here: the peer of the raw-text benchmarks."""

from __future__ import annotations

import os
from pathlib import Path


def train_udpipe(train: Path, path: Path, tokenizer: str, tagger: str) -> None:
    """Train UDPipe's tokenizer and tagger (no parser) on CoNLL-U ``train`` with the option
    strings ``tokenizer`` and ``tagger`` (``""``: UDPipe's defaults), and write the model to
    ``path`` (a temporary file, then a rename)."""
    from ufal.udpipe import InputFormat, ProcessingError, Sentence, Sentences, Trainer
    fmt = InputFormat.newConlluInputFormat()
    fmt.setText(train.read_text(encoding="utf-8"))
    sents, err = Sentences(), ProcessingError()
    while True:
        s = Sentence()
        if not fmt.nextSentence(s, err):
            break
        sents.push_back(s)
    if err.occurred():
        raise SystemExit(f"UDPipe cannot read {train}: {err.message}")
    model = Trainer.train("morphodita_parsito", sents, Sentences(), tokenizer, tagger, "none",
                          err)
    if err.occurred():
        raise SystemExit(f"UDPipe training failed on {train}: {err.message}")
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(model if isinstance(model, bytes) else model.encode("latin-1"))
    os.replace(tmp, path)
