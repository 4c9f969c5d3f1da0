"""The built-in template sets (``pos``, ``chunk``, ``ner``): template text only.

:meth:`cseq.features.template_language.Templates.preset` parses them;
``docs/templates.md`` says what each is for and how it was chosen.
"""

__all__ = ["PRESETS"]

_POS = """\
# cseq preset "pos": part-of-speech tagging over column 0 (the word).
# Words in a +/-2 window, lowercased, and the current word as written.
U00:%x[-2,0:lower]
U01:%x[-1,0:lower]
U02:%x[0,0:lower]
U03:%x[1,0:lower]
U04:%x[2,0:lower]
U05:%x[0,0]
U06:%x[-1,0:lower]/%x[0,0:lower]
U07:%x[0,0:lower]/%x[1,0:lower]
# Affixes of the current word.
U10:%x[0,0:prefix1]
U11:%x[0,0:prefix2]
U12:%x[0,0:prefix3]
U13:%x[0,0:prefix4]
U14:%x[0,0:suffix1]
U15:%x[0,0:suffix2]
U16:%x[0,0:suffix3]
U17:%x[0,0:suffix4]
# Suffixes of the neighbours.
U18:%x[-1,0:suffix3]
U19:%x[1,0:suffix3]
# Orthography.
U20:%x[0,0:hashyphen]
U21:%x[0,0:istitle]
U22:%x[0,0:isupper]
U23:%x[0,0:hasdigit]
U24:%x[0,0:alldigits]
U25:%x[0,0:shape]
U26:%x[0,0:shortshape]
U27:%x[0,0:ispunct]
U28:%x[0,0:len]
U29:%x[-1,0:shortshape]/%x[0,0:shortshape]/%x[1,0:shortshape]
# Word pairs and a trigram in the window.
U40:%x[-1,0:lower]/%x[0,0:suffix3]
U41:%x[0,0:suffix3]/%x[1,0:lower]
U42:%x[-1,0:lower]/%x[1,0:lower]
U43:%x[-2,0:lower]/%x[-1,0:lower]
U44:%x[1,0:lower]/%x[2,0:lower]
U45:%x[-2,0:lower]/%x[0,0:lower]
U46:%x[0,0:lower]/%x[2,0:lower]
U47:%x[-1,0:lower]/%x[0,0:lower]/%x[1,0:lower]
# Longer affixes, for unknown words.
U50:%x[0,0:suffix5]
U51:%x[0,0:suffix6]
U52:%x[0,0:prefix5]
# Capitalisation in context (PROPN against NOUN), shape with suffix.
U60:%x[-1,0:lower]/%x[0,0:istitle]
U61:%x[0,0:istitle]/%x[1,0:istitle]
U62:%x[-1,0:istitle]/%x[0,0:istitle]
U63:%x[0,0:shape]/%x[0,0:suffix3]
U64:%x[-1,0:shortshape]/%x[0,0:lower]
U65:%x[0,0:lower]/%x[1,0:shortshape]
U66:%x[-1,0:suffix2]/%x[0,0:lower]
U67:%x[0,0:lower]/%x[1,0:suffix2]
# Ambiguity classes: the tags each word was seen with in training (jackknifed
# on the training data itself, see cseq.features.tagdict), here and around.
U80:%x[0,0:tags]
U81:%x[1,0:tags]
U82:%x[-1,0:tags]
U83:%x[2,0:tags]
U84:%x[0,0:tags]/%x[1,0:tags]
U85:%x[-1,0:tags]/%x[0,0:tags]
U86:%x[0,0:tags]/%x[0,0:lower]
U87:%x[1,0:tags]/%x[0,0:suffix3]
# Label prior.
U99:bias
B
"""

#: CRF++'s chunking template (its ``example/chunking/template``): the start of the
#: ``chunk`` preset, and the attribute set of the core benchmark (``bench/common/features.py``).
CRFPP_CHUNK = """\
U00:%x[-2,0]
U01:%x[-1,0]
U02:%x[0,0]
U03:%x[1,0]
U04:%x[2,0]
U05:%x[-1,0]/%x[0,0]
U06:%x[0,0]/%x[1,0]

U10:%x[-2,1]
U11:%x[-1,1]
U12:%x[0,1]
U13:%x[1,1]
U14:%x[2,1]
U15:%x[-2,1]/%x[-1,1]
U16:%x[-1,1]/%x[0,1]
U17:%x[0,1]/%x[1,1]
U18:%x[1,1]/%x[2,1]

U20:%x[-2,1]/%x[-1,1]/%x[0,1]
U21:%x[-1,1]/%x[0,1]/%x[1,1]
U22:%x[0,1]/%x[1,1]/%x[2,1]
"""

_CHUNK = """\
# cseq preset "chunk": column 0 = word, column 1 = POS; first the CRF++ chunking set.
""" + CRFPP_CHUNK + """
# Beyond CRF++'s set (measured on the CoNLL-2000 dev split in
# docs/accuracy.md): lowercased words around the token,
U30:%x[-1,0:lower]
U31:%x[0,0:lower]
U32:%x[1,0:lower]
# word and POS tag conjunctions,
U60:%x[0,1]/%x[0,0]
U61:%x[-1,1]/%x[0,0]
U62:%x[0,0]/%x[1,1]
U63:%x[-1,0]/%x[0,1]
U64:%x[0,1]/%x[1,0]
# and a wider POS window: two 4-grams and the tags 3 away.
U70:%x[-1,1]/%x[0,1]/%x[1,1]/%x[2,1]
U71:%x[-2,1]/%x[-1,1]/%x[0,1]/%x[1,1]
U72:%x[-3,1]
U73:%x[3,1]

B
"""

_NER = """\
# cseq preset "ner": named entities over column 0 (the word).
# Words in a +/-2 window as written, and lowercased around the current one.
U00:%x[-2,0]
U01:%x[-1,0]
U02:%x[0,0]
U03:%x[1,0]
U04:%x[2,0]
U05:%x[-1,0:lower]
U06:%x[0,0:lower]
U07:%x[1,0:lower]
U08:%x[-1,0:lower]/%x[0,0:lower]
U09:%x[0,0:lower]/%x[1,0:lower]
# Shapes.
U10:%x[0,0:shape]
U11:%x[-1,0:shortshape]
U12:%x[0,0:shortshape]
U13:%x[1,0:shortshape]
U14:%x[-1,0:shortshape]/%x[0,0:shortshape]/%x[1,0:shortshape]
# Affixes.
U20:%x[0,0:prefix1]
U21:%x[0,0:prefix2]
U22:%x[0,0:prefix3]
U23:%x[0,0:prefix4]
U24:%x[0,0:suffix1]
U25:%x[0,0:suffix2]
U26:%x[0,0:suffix3]
U27:%x[0,0:suffix4]
# Case and character classes.
U30:%x[0,0:istitle]
U31:%x[0,0:isupper]
U32:%x[0,0:hasdigit]
U33:%x[0,0:alldigits]
U34:%x[0,0:hashyphen]
U35:%x[0,0:ispunct]
U36:%x[-1,0:istitle]
U37:%x[1,0:istitle]
U38:%x[-1,0:istitle]/%x[0,0:istitle]/%x[1,0:istitle]
U39:%x[0,0:len]
# Label prior.
U99:bias
B
"""

#: Template text of the built-in presets.
PRESETS: dict[str, str] = {"pos": _POS, "chunk": _CHUNK, "ner": _NER}

#: The shipped word classes (``cseq.features.clusters.BUNDLED``) that ``cseq train``
#: adds to a preset when ``--clusters`` is not given (``--clusters none`` leaves them
#: out): chosen on 5 folds of the training data, where a change must gain more than
#: two standard errors (``bench/accuracy/folds.py``, docs/accuracy.md).
PRESET_CLUSTERS: dict[str, str] = {"pos": "en", "ner": "en"}
