"""Lemmas as sequence labeling: a class per edit rule that turns a form into its lemma.

A rule (:func:`lemma_rule`) says how to get the lemma from the form: whether
to lower-case the form first, how many characters to cut from its start and
its end, and what to add at the end; so ``"walked" -> "walk"`` is
``"k0|2|"`` (keep the case, cut none from the start and two from the end,
add nothing), and every regular past tense of English shares it.  A lemma
that keeps too little of its form (``"went" -> "go"``) is a rule of its own
that gives the lemma whole (``"=go"``).  A tagger learns the rules as labels
over the words (their suffixes and context), so a new word gets the rule of
the words it resembles; :class:`Lemmatizer` adds the table of the forms that
training saw with one lemma only, which keep it.

:func:`apply_rule` never fails: a rule that cannot apply to a form (it cuts
more characters than the form has) gives the form itself.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from cseq.exceptions import InputError, InputTypeError, ModelFormatError

__all__ = ["Lemmatizer", "MAX_PREFIX_CUT", "apply_rule", "lemma_rule", "lemma_table"]

#: Most characters a rule cuts from the start of a form (German ``ge-``, Greek
#: augments); a longer cut is not worth a class: the lemma is given whole.
MAX_PREFIX_CUT = 4


def lemma_rule(form: str, lemma: str) -> str:
    """The rule that turns ``form`` into ``lemma`` (:func:`apply_rule` inverts it).

    The rule is ``"<case><start>|<end>|<add>"``: ``case`` is ``k`` (keep the
    form as written) or ``l`` (lower-case it first, where the lemma is lower
    case and the form is not), then ``start`` and ``end`` characters are cut
    and ``add`` is appended.  The cut keeps the longest stretch of the form
    that begins the lemma, starting at most :data:`MAX_PREFIX_CUT` characters
    in; a lemma that shares less than half of a form longer than two
    characters (and any lemma that shares nothing) is given whole,
    ``"=<lemma>"``.

    Examples
    --------
    >>> lemma_rule("walked", "walk"), lemma_rule("Dogs", "dog"), lemma_rule("went", "go")
    ('k0|2|', 'l0|1|', '=go')
    >>> lemma_rule("gemacht", "machen")
    'k2|1|en'
    """
    case = "l" if lemma.islower() and not form.islower() else "k"
    base = form.lower() if case == "l" else form
    best_k, best_p = 0, 0
    for p in range(min(len(base), MAX_PREFIX_CUT) + 1):
        k = 0
        limit = min(len(base) - p, len(lemma))
        while k < limit and base[p + k] == lemma[k]:
            k += 1
        if k > best_k:
            best_k, best_p = k, p
    if best_k == 0 or (len(base) > 2 and 2 * best_k < len(base)):
        return "=" + lemma
    return f"{case}{best_p}|{len(base) - best_p - best_k}|{lemma[best_k:]}"


def apply_rule(form: str, rule: str) -> str:
    """The lemma that ``rule`` (as :func:`lemma_rule` writes them) gives for ``form``.

    A rule that does not apply (it cuts more than the form has, would leave
    nothing, or is not a rule) gives ``form`` unchanged: a lemma is never empty.

    Examples
    --------
    >>> apply_rule("jumped", "k0|2|"), apply_rule("Cats", "l0|1|"), apply_rule("is", "=be")
    ('jump', 'cat', 'be')
    >>> apply_rule("a", "k0|3|"), apply_rule("s", "k0|1|")
    ('a', 's')
    """
    if rule.startswith("="):
        return rule[1:] or form
    head, sep, rest = rule.partition("|")
    cut_end, sep2, add = rest.partition("|")
    if not (sep and sep2 and head[:1] in ("k", "l") and head[1:].isdigit() and cut_end.isdigit()):
        return form
    start, end = int(head[1:]), int(cut_end)
    # lower-casing may change the length ("İ" is two characters lower-cased): the cuts
    # count characters of the lower-cased form, as lemma_rule measured them
    base = form.lower() if head[0] == "l" else form
    if start + end > len(base):
        return form
    # a rule that would leave nothing (cut all of a short form, add nothing) leaves the form
    return base[start:len(base) - end] + add or form


def lemma_table(pairs: Iterable[tuple[str, str]], *, min_count: int = 1) -> dict[str, str]:
    """Form -> lemma, for the forms seen with one lemma only (at least ``min_count`` times).

    Examples
    --------
    >>> lemma_table([("saw", "see"), ("saw", "saw"), ("cats", "cat")])
    {'cats': 'cat'}
    """
    seen: dict[str, Counter[str]] = defaultdict(Counter)
    for form, lemma in pairs:
        seen[form][lemma] += 1
    return {form: next(iter(c)) for form, c in seen.items()
            if len(c) == 1 and sum(c.values()) >= min_count}


class Lemmatizer:
    """A lemma per word: the training table's lemma for a form seen with one, else a tagger's rule.

    Parameters
    ----------
    tagger : fitted cseq estimator
        A tagger over the words whose labels are rules (:func:`lemma_rule`).
    table : dict of str to str
        Forms seen in training with one lemma only (:func:`lemma_table`).

    Examples
    --------
    >>> import cseq
    >>> words = [["The", "dogs", "walked"], ["A", "cat", "jumped"]]
    >>> lemmas = [["the", "dog", "walk"], ["a", "cat", "jump"]]
    >>> lem = Lemmatizer.fit(cseq.StructuredPerceptron(max_iter=5,
    ...                      features=cseq.TemplateFeaturizer("pos")), words, lemmas)
    >>> lem.predict([["The", "cat", "talked"]])
    [['the', 'cat', 'talk']]
    """

    def __init__(self, tagger: Any, table: dict[str, str]) -> None:
        if getattr(tagger, "model_", None) is None or not callable(getattr(tagger, "predict", None)):
            raise InputTypeError(f"the lemmatizer's tagger must be a fitted cseq tagger, got "
                                 f"{type(tagger).__name__}")
        if not isinstance(table, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in table.items()):
            raise InputTypeError("the lemma table must be a dict of str to str")
        self.tagger = tagger
        self.table = table

    @classmethod
    def fit(cls, tagger: Any, words: Sequence[Sequence[str]], lemmas: Sequence[Sequence[str]],
            *, upos: Sequence[Sequence[str]] | None = None, **fit_params: Any) -> Lemmatizer:
        """Learn the rules of ``lemmas`` (one per word of ``words``) with ``tagger`` (unfitted).

        With ``upos`` (a tag per word), the tagger reads rows ``(word, upos)``,
        and :meth:`predict` must be given such rows too.
        """
        if len(words) != len(lemmas) or (upos is not None and len(upos) != len(words)):
            raise InputError(f"{len(words)} sentences of words but {len(lemmas)} of lemmas"
                             + ("" if upos is None else f" and {len(upos)} of tags"))
        rules = []
        for i, (ws, ls) in enumerate(zip(words, lemmas)):
            if len(ws) != len(ls) or (upos is not None and len(upos[i]) != len(ws)):
                raise InputError(f"sentence {i}: {len(ws)} words but {len(ls)} lemmas"
                                 + ("" if upos is None else f" and {len(upos[i])} tags"))
            rules.append([lemma_rule(w, lem) for w, lem in zip(ws, ls)])
        X = ([[(w,) for w in ws] for ws in words] if upos is None else
             [[(w, u) for w, u in zip(ws, us)] for ws, us in zip(words, upos)])
        tagger.fit(X, rules, **fit_params)
        table = lemma_table((w, lem) for ws, ls in zip(words, lemmas) for w, lem in zip(ws, ls))
        return cls(tagger, table)

    def predict(self, X: Sequence[Sequence[Any]], *, n_jobs: int = 1) -> list[list[str]]:
        """The lemma of every word of ``X`` (sentences of words, or of rows whose first
        column is the word)."""
        rules = self.tagger.predict(X, n_jobs=n_jobs)
        table = self.table
        out = []
        for sent, rs in zip(X, rules):
            row = []
            for tok, rule in zip(sent, rs):
                form = tok if isinstance(tok, str) else tok[0]
                lemma = table.get(form)
                row.append(apply_rule(form, rule) if lemma is None else lemma)
            out.append(row)
        return out

    def get_state(self) -> list[list[str]]:
        """The table as JSON-able rows ``[form, lemma]``, sorted (a pipeline file's header)."""
        return [[k, v] for k, v in sorted(self.table.items())]

    @staticmethod
    def table_from_state(rows: Any) -> dict[str, str]:
        """The table of :meth:`get_state`'s rows; ModelFormatError if they are malformed."""
        if not isinstance(rows, list) or not all(
                isinstance(r, list) and len(r) == 2 and all(isinstance(s, str) and s for s in r)
                for r in rows):
            raise ModelFormatError("the lemma table is malformed (rows of a form and a lemma)")
        return {form: lemma for form, lemma in rows}
