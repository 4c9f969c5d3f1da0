"""Scores of a segmented and tagged CoNLL-U file against gold, as the CoNLL 2018 shared task computes them.

The CoNLL 2018 shared task on parsing raw text (Zeman et al., 2018) scored
systems that segment the text themselves, so a system's tokens and words need
not be the gold ones.  Its evaluation script (``conll18_ud_eval.py``) aligns
the two files through their characters: both files must spell the same
characters once every space (Unicode category ``Zs``) is taken out of the
forms, and each token and sentence is a span of that character string.
:func:`ud_scores` follows the script's rules:

* **Tokens** and **Sentences**: a system span is correct when a gold span
  starts and ends at the same characters.  A multiword token (``3-4``) is one
  token; empty nodes (``8.1``) are ignored.
* **Words**: a word outside any multiword token is aligned with a word of the
  other file that has the same span.  Where either file has a multiword token,
  the words are aligned inside the smallest stretch of characters that
  multiword tokens on both sides (and the words overlapping them) cover,
  through a longest common subsequence of their forms, compared case-
  insensitively; ties go the way the script's walk through its table goes.
* **UPOS**, **XPOS**: an aligned word whose column equals the gold one.
  **UFeats**: the same of FEATS with only its universal features
  (:data:`UNIVERSAL_FEATURES`), sorted; **AllTags**: UPOS, XPOS and UFeats
  together; **Lemmas**: LEMMA, a gold ``_`` matching any system lemma.
  Precision divides by the system's words, recall by the gold words;
  ``aligned_accuracy`` divides by the aligned words.

What the script checks and this function does not: the dependency tree
(HEAD, DEPREL), which cseq does not predict, so a file with ``_`` in HEAD
scores here where the script refuses it.  Blank lines in excess, which the
script refuses as a sentence without a root, are skipped.

References
----------
Zeman, D., Hajič, J., Popel, M., Potthast, M., Straka, M., Ginter, F., Nivre,
J., Petrov, S. (2018). CoNLL 2018 Shared Task: Multilingual Parsing from Raw
Text to Universal Dependencies. *Proceedings of the CoNLL 2018 Shared Task*,
1-21.
"""

from __future__ import annotations

import bisect
import unicodedata
from dataclasses import dataclass

from cseq.exceptions import InputError
from cseq.io.conll_read import conllu_blocks, is_word_id
from cseq.io.sources import Source, open_lines, source_name

__all__ = ["UNIVERSAL_FEATURES", "UDScore", "ud_scores"]


@dataclass(frozen=True)
class UDScore:
    """Counts and scores of one metric of :func:`ud_scores`.

    Attributes
    ----------
    gold, system : int
        Units (tokens, sentences, words) in each file.
    correct : int
        System units that are right.
    aligned : int or None
        Words aligned with a gold word (None for tokens and sentences, which
        have no alignment step).
    """

    gold: int
    system: int
    correct: int
    aligned: int | None = None

    @property
    def precision(self) -> float:
        """``correct / system``; 0.0 with no system unit."""
        return self.correct / self.system if self.system else 0.0

    @property
    def recall(self) -> float:
        """``correct / gold``; 0.0 with no gold unit."""
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        """The harmonic mean of precision and recall; 0.0 with no unit at all."""
        total = self.gold + self.system
        return 2 * self.correct / total if total else 0.0

    @property
    def aligned_accuracy(self) -> float | None:
        """``correct / aligned`` for the columns of aligned words, else None."""
        return self.correct / self.aligned if self.aligned else None


@dataclass(frozen=True, slots=True)
class _Word:
    start: int          # the span of its token in the file's characters
    end: int
    multiword: bool     # part of a multiword token
    form: str           # lower-cased, spaces removed: what the LCS compares
    upos: str
    xpos: str
    ufeats: str         # the universal features only, sorted (as the script compares them)
    lemma: str


class _Treebank:
    """The characters, token spans, sentence spans and words of one CoNLL-U file."""

    def __init__(self, source: Source, encoding: str) -> None:
        self.name = source_name(source)
        self.chars: list[str] = []
        self.tokens: list[tuple[int, int]] = []
        self.sentences: list[tuple[int, int]] = []
        self.words: list[_Word] = []
        # for messages: the line of each sentence's first word
        self.sentence_lines: list[int] = []
        with open_lines(source, encoding) as lines:
            for block in conllu_blocks(lines, self.name):
                if block.sentence is not None:
                    self._add(block.lines, block.sentence.line)

    def _add(self, lines: list[str], first_line: int) -> None:
        start = len(self.chars)
        range_end = 0          # last word ID of the multiword token being read
        for line in lines:
            if line.startswith("#"):
                continue
            fields = line.split("\t")
            kind = is_word_id(fields[0])
            if kind is False and "." in fields[0]:
                continue        # an empty node: no characters, no word
            if kind is False or int(fields[0]) > range_end:
                form = _strip_spaces(fields[1])
                if not form:
                    raise InputError(f"{self.name}: empty FORM in the sentence of line "
                                     f"{first_line}: {line!r}")
                self.chars.extend(form)
                self.tokens.append((len(self.chars) - len(form), len(self.chars)))
            if kind is False:
                range_end = int(fields[0].partition("-")[2])
                continue
            tok_start, tok_end = self.tokens[-1]
            self.words.append(_Word(tok_start, tok_end, int(fields[0]) <= range_end,
                                    _strip_spaces(fields[1]).lower(), fields[3], fields[4],
                                    _universal(fields[5]), fields[2]))
        if len(self.chars) > start:
            self.sentences.append((start, len(self.chars)))
            self.sentence_lines.append(first_line)

    def where(self, char: int) -> str:
        """The file and line of the sentence that holds character ``char``, for messages."""
        i = bisect.bisect_right(self.sentences, (char, len(self.chars) + 1)) - 1
        if char >= len(self.chars) or i < 0:
            return f"the end of {self.name}"
        return f"the sentence at {self.name}:{self.sentence_lines[i]}"



#: The universal features of UD v2 that UFeats compares (the CoNLL 2018 scorer's
#: UNIVERSAL_FEATURES); any other feature of FEATS is left out on both sides.
UNIVERSAL_FEATURES = frozenset({
    "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy", "Number",
    "Case", "Definite", "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice", "Evident",
    "Polarity", "Person", "Polite"})


def _universal(feats: str) -> str:
    """FEATS with only its universal features, sorted, joined by ``|`` (``_`` gives "")."""
    return "|".join(sorted(f for f in feats.split("|")
                           if f.partition("=")[0] in UNIVERSAL_FEATURES))


def _strip_spaces(form: str) -> str:
    """The form without its space characters (category Zs), as the script compares them."""
    if form.isascii():
        return form.replace(" ", "")
    return "".join(c for c in form if unicodedata.category(c) != "Zs")


def _span_score(gold: list[tuple[int, int]], system: list[tuple[int, int]]) -> UDScore:
    """Spans with the same start and end in both sorted lists."""
    correct = gi = si = 0
    while gi < len(gold) and si < len(system):
        g, s = gold[gi], system[si]
        if s[0] < g[0]:
            si += 1
        elif g[0] < s[0]:
            gi += 1
        else:
            correct += g[1] == s[1]
            gi += 1
            si += 1
    return UDScore(len(gold), len(system), correct)


def _past(words: list[_Word], i: int, end: int) -> bool:
    """Whether word ``i`` lies beyond a multiword stretch that ends at character ``end``."""
    if i >= len(words):
        return True
    w = words[i]
    return w.start >= end if w.multiword else w.end > end


def _stretch(gold: list[_Word], system: list[_Word], gi: int, si: int
             ) -> tuple[int, int, int, int]:
    """The words ``gold[gs:ge]`` and ``system[ss:se]`` of the multiword stretch at ``gi``, ``si``.

    The stretch starts at the multiword token (a plain word of the other side
    that starts before it is left out) and grows while a word of either side
    overlaps it, a multiword token extending it to its own end.
    """
    if gold[gi].multiword:
        end = gold[gi].end
        if not system[si].multiword and system[si].start < gold[gi].start:
            si += 1
    else:
        end = system[si].end
        if not gold[gi].multiword and gold[gi].start < system[si].start:
            gi += 1
    gs, ss = gi, si
    while not _past(gold, gi, end) or not _past(system, si, end):
        if gi < len(gold) and (si >= len(system) or gold[gi].start <= system[si].start):
            w, gi = gold[gi], gi + 1
        else:
            w, si = system[si], si + 1
        if w.multiword:
            end = max(end, w.end)
    return gs, gi, ss, si


def _align_lcs(gold: list[_Word], system: list[_Word], pairs: list[tuple[int, int]]) -> None:
    """Append to ``pairs`` the (gold, system) index pairs of an LCS of the forms."""
    n, m = len(gold), len(system)
    # table[g][s]: the LCS length of gold[g:] and system[s:]
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for g in range(n - 1, -1, -1):
        row, below = table[g], table[g + 1]
        for s in range(m - 1, -1, -1):
            same = 1 + below[s + 1] if gold[g].form == system[s].form else 0
            row[s] = max(same, below[s], row[s + 1])
    g = s = 0
    while g < n and s < m:
        if gold[g].form == system[s].form:
            pairs.append((g, s))
            g += 1
            s += 1
        elif table[g][s] == table[g + 1][s]:
            g += 1
        else:
            s += 1


def _align(gold: list[_Word], system: list[_Word]) -> list[tuple[int, int]]:
    """Index pairs of aligned gold and system words, in order."""
    pairs: list[tuple[int, int]] = []
    gi = si = 0
    while gi < len(gold) and si < len(system):
        g, s = gold[gi], system[si]
        if g.multiword or s.multiword:
            gs, gi, ss, si = _stretch(gold, system, gi, si)
            if gi > gs and si > ss:
                found: list[tuple[int, int]] = []
                _align_lcs(gold[gs:gi], system[ss:si], found)
                pairs.extend((gs + a, ss + b) for a, b in found)
        elif (g.start, g.end) == (s.start, s.end):
            pairs.append((gi, si))
            gi += 1
            si += 1
        elif g.start <= s.start:
            gi += 1
        else:
            si += 1
    return pairs


def ud_scores(gold: Source, system: Source, *, encoding: str = "utf-8") -> dict[str, UDScore]:
    """Tokens, sentences, words, UPOS, XPOS, UFeats, AllTags and Lemmas scores of ``system``.

    The rules are those of the CoNLL 2018 shared task's ``conll18_ud_eval.py``
    (see the module's documentation); the figures are the same as its, on
    any pair of files it accepts.

    Parameters
    ----------
    gold, system : str, os.PathLike or file object
        CoNLL-U files (paths, or files open in text or binary mode).  HEAD
        and DEPREL are not read, so ``_`` is accepted there.
    encoding : str, default "utf-8"
        Encoding of paths and binary files.

    Returns
    -------
    dict of str to UDScore
        ``"tokens"``, ``"sentences"``, ``"words"``, ``"upos"``, ``"xpos"``,
        ``"ufeats"`` (the universal features of FEATS, :data:`UNIVERSAL_FEATURES`),
        ``"alltags"`` (UPOS, XPOS and UFeats together) and ``"lemmas"``.

    Raises
    ------
    InputError
        If a file is not valid CoNLL-U (naming the file and line), has an
        empty form, or the two files do not spell the same characters (naming
        the first difference and its line in each file).

    Examples
    --------
    >>> import io
    >>> gold = "1\\tHi\\t_\\tINTJ\\t_\\t_\\t0\\troot\\t_\\t_\\n\\n"
    >>> ud_scores(io.StringIO(gold), io.StringIO(gold))["upos"].f1
    1.0
    """
    g = _Treebank(gold, encoding)
    s = _Treebank(system, encoding)
    if g.chars != s.chars:
        i = 0
        while i < min(len(g.chars), len(s.chars)) and g.chars[i] == s.chars[i]:
            i += 1
        raise InputError(
            f"the two files do not spell the same text (spaces aside): they differ at character "
            f"{i}, {''.join(g.chars[i:i + 20])!r} ({g.where(i)}) against "
            f"{''.join(s.chars[i:i + 20])!r} ({s.where(i)})"
        )
    pairs = _align(g.words, s.words)
    n_gold, n_sys, n_aligned = len(g.words), len(s.words), len(pairs)

    def column(attr: str) -> UDScore:
        correct = sum(getattr(g.words[a], attr) == getattr(s.words[b], attr) for a, b in pairs)
        return UDScore(n_gold, n_sys, correct, n_aligned)

    return {
        "tokens": _span_score(g.tokens, s.tokens),
        "sentences": _span_score(g.sentences, s.sentences),
        "words": UDScore(n_gold, n_sys, n_aligned, n_aligned),
        "upos": column("upos"),
        "xpos": column("xpos"),
        "ufeats": column("ufeats"),
        "alltags": UDScore(n_gold, n_sys, sum(
            (gw.upos, gw.xpos, gw.ufeats) == (sw.upos, sw.xpos, sw.ufeats)
            for gw, sw in ((g.words[a], s.words[b]) for a, b in pairs)), n_aligned),
        # a gold lemma "_" (a treebank without lemmas there) counts as matched, as in the script
        "lemmas": UDScore(n_gold, n_sys, sum(
            gw.lemma == "_" or gw.lemma == sw.lemma
            for gw, sw in ((g.words[a], s.words[b]) for a, b in pairs)), n_aligned),
    }
