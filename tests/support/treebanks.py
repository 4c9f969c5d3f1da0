"""A small synthetic UD treebank: lemmas, XPOS, FEATS, a contraction, paragraphs.

What the pipeline tests (``tests/segment/test_pipeline_file.py``) and the pipeline-file
fuzz target (``tests/support/fuzz_targets.py``) train on: a regular little language, so
that a pipeline trained on a few hundred sentences of it tags it nearly perfectly.
"""

from __future__ import annotations

import random

_NOUNS = [("dog", "dogs"), ("cat", "cats"), ("house", "houses"), ("tree", "trees"),
          ("bird", "birds"), ("road", "roads"), ("lake", "lakes"), ("hill", "hills")]
_VERBS = [("walk", "walked", "walks"), ("jump", "jumped", "jumps"), ("look", "looked", "looks"),
          ("climb", "climbed", "climbs"), ("paint", "painted", "paints")]


def word(i, form, lemma, upos, xpos, feats, misc="_"):
    return "\t".join([str(i), form, lemma, upos, xpos, feats, "0" if i == 1 else "1",
                      "root" if i == 1 else "dep", "_", misc])


def treebank(n: int, seed: int = 0) -> str:
    """CoNLL-U of ``n`` sentences with lemmas, XPOS, FEATS and a contraction (``du`` = ``de le``)."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        if k % 5 == 0:
            out.append("# newpar")
        sg, plural = rng.choice(_NOUNS)
        lemma, past, pres = rng.choice(_VERBS)
        many = rng.random() < 0.5
        noun = plural if many else sg
        verb, tense = (past, "Past") if rng.random() < 0.5 else (pres, "Pres")
        det = "The" if rng.random() < 0.7 else "A"
        num = "Plur" if many else "Sing"
        rows = [word(1, det, det.lower(), "DET", "DT", "Definite=Def" if det == "The"
                      else "Definite=Ind"),
                word(2, noun, sg, "NOUN", "NNS" if many else "NN", f"Number={num}"),
                word(3, verb, lemma, "VERB", "VBD" if tense == "Past" else "VBZ",
                      f"Tense={tense}|VerbForm=Fin")]
        text = f"{det} {noun} {verb}"
        if rng.random() < 0.4:
            other = rng.choice(_NOUNS)[0]
            rows += ["4-5\tdu\t_\t_\t_\t_\t_\t_\t_\t_",
                     word(4, "de", "de", "ADP", "IN", "_"), word(5, "le", "le", "DET", "DT",
                                                                    "Definite=Def"),
                     word(6, other, other, "NOUN", "NN", "Number=Sing", "SpaceAfter=No")]
            text += f" du {other}"
        else:
            rows[-1] = rows[-1][:-1] + "SpaceAfter=No"
        n_words = 6 if len(rows) > 4 else 3
        rows.append(word(n_words + 1, ".", ".", "PUNCT", ".", "_"))
        out.append(f"# sent_id = {k}\n# text = {text}.\n" + "\n".join(rows) + "\n")
    return "\n".join(out) + "\n"
