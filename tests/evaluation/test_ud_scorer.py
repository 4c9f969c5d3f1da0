"""Cseq.metrics.ud_scores: the CoNLL 2018 shared task's scores.

The expected figures of the small cases were computed by hand and checked
against the shared task's ``conll18_ud_eval.py`` (run outside the test
suite: the script is not a dependency).  On EWT dev against three randomly
perturbed system files (tokens merged and split, multiword tokens made
plain, shortened and re-cased, sentence boundaries moved, UPOS changed) every
figure equalled the script's.
"""

from __future__ import annotations

import io

import pytest

from cseq.exceptions import CSeqError, InputError
from cseq.metrics import UDScore, ud_scores
from support.paths import SHARED

DATA = SHARED / "data" / "ud_en_ewt"
EWT_DEV = DATA / "en_ewt-ud-dev.conllu"


def _conllu(rows: str) -> io.StringIO:
    """CoNLL-U from lines whose columns are separated by single spaces."""
    out = []
    for line in rows.strip("\n").split("\n"):
        line = line.strip()
        out.append(line if not line or line.startswith("#") else "\t".join(line.split(" ")))
    return io.StringIO("\n".join(out) + "\n\n")


GOLD = """
# text = I didn't go. Du vin
1 I _ PRON PRP _ 3 nsubj _ _
2-3 didn't _ _ _ _ _ _ _ _
2 did _ AUX VBD _ 4 aux _ _
3 n't _ PART RB _ 4 advmod _ _
4 go _ VERB VB _ 0 root _ SpaceAfter=No
5 . _ PUNCT . _ 4 punct _ _

1-2 Du _ _ _ _ _ _ _ _
1 De _ ADP _ _ 3 case _ _
2 le _ DET _ _ 3 det _ _
3 vin _ NOUN _ _ 0 root _ _
"""

# One sentence; "didn't" split into plain tokens; "go." one token; "Du" with
# a re-cased and a wrong word; HEAD a placeholder.
SYSTEM = """
1 I _ PRON _ _ 0 root _ _
2 did _ AUX _ _ 1 dep _ _
3 n't _ ADV _ _ 1 dep _ _
4 go. _ VERB _ _ 1 dep _ _
5-6 Du _ _ _ _ _ _ _ _
5 de _ ADP _ _ 1 dep _ _
6 la _ DET _ _ 1 dep _ _
7 vin _ NOUN _ _ _ _ _ _
"""


def _counts(score: UDScore) -> tuple:
    return score.gold, score.system, score.correct, score.aligned


def test_hand_case_equals_the_shared_task_script():
    # conll18_ud_eval.py -v: Tokens 50.00/50.00, Sentences 0, Words 71.43/62.50,
    # UPOS 57.14/50.00 (aligned 80.00), XPOS 28.57/25.00 (aligned 40.00)
    r = ud_scores(_conllu(GOLD), _conllu(SYSTEM))
    assert _counts(r["tokens"]) == (6, 6, 3, None)
    assert _counts(r["sentences"]) == (2, 1, 0, None)
    # aligned: I; did, n't (LCS inside "didn't"); De ~ de (case-insensitive); vin
    assert _counts(r["words"]) == (8, 7, 5, 5)
    assert _counts(r["upos"]) == (8, 7, 4, 5)
    assert _counts(r["xpos"]) == (8, 7, 2, 5)
    assert round(100 * r["upos"].f1, 2) == 53.33
    assert r["upos"].aligned_accuracy == pytest.approx(0.8)


def test_a_file_against_itself_scores_one():
    r = ud_scores(_conllu(GOLD), _conllu(GOLD))
    assert all(s.f1 == 1.0 for s in r.values())


def test_empty_nodes_and_spaces_in_forms_are_not_characters():
    gold = "1 New_York _ PROPN _ _ 0 root _ _\n2 is _ AUX _ _ 1 cop _ _"
    gold = _conllu(gold).getvalue().replace("New_York", "New York")
    system = """
1 New _ PROPN _ _ 0 root _ _
2 York _ PROPN _ _ 1 flat _ _
2.1 gone _ VERB _ _ _ _ _ _
3 is _ AUX _ _ 1 cop _ _
"""
    r = ud_scores(io.StringIO(gold), _conllu(system))
    assert _counts(r["tokens"]) == (2, 3, 1, None)
    assert _counts(r["words"]) == (2, 3, 1, 1)
    assert r["sentences"].f1 == 1.0


def test_different_text_is_refused_naming_the_place():
    system = _conllu(SYSTEM.replace("go.", "go!"))
    with pytest.raises(InputError, match=r"do not spell the same text.*character 9, "
                       r"'.Duvin' \(the sentence at <stream>:2\) against '!Duvin'"):
        ud_scores(_conllu(GOLD), system)


def test_bad_conllu_and_empty_form_are_clear_errors():
    with pytest.raises(CSeqError, match="10 TAB-separated columns"):
        ud_scores(_conllu(GOLD), io.StringIO("1\tI\n\n"))
    with pytest.raises(InputError, match="empty FORM"):
        ud_scores(_conllu(GOLD), io.StringIO("1\t \t_\t_\t_\t_\t0\troot\t_\t_\n\n"))


def test_no_units_scores_zero():
    r = ud_scores(io.StringIO(""), io.StringIO("\n"))
    assert all(s.f1 == 0.0 and s.precision == 0.0 and s.recall == 0.0 for s in r.values())
    assert r["upos"].aligned_accuracy is None


@pytest.mark.skipif(not EWT_DEV.exists(), reason="EWT not available")
def test_ewt_dev_against_itself():
    r = ud_scores(EWT_DEV, EWT_DEV)
    assert _counts(r["tokens"]) == (24787, 24787, 24787, None)   # the script's counts
    assert _counts(r["words"]) == (25147, 25147, 25147, 25147)
    assert r["sentences"].gold == 2001
