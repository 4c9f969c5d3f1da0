"""The documented module paths, kept as façades over the layers that hold the code.

``cseq.templates`` and ``cseq.conll`` are façades over ``cseq.features`` and
``cseq.io``; ``cseq.serialize.loads`` is what every pickle written so far
calls.  These tests fail if a façade loses a name, or the pickle path goes.
"""

from __future__ import annotations

import importlib
import pickle
import struct

import numpy as np
import pytest

import cseq
from support.paths import DATA


#: Every public name each documented module offered before the split.
PUBLIC = {
    "cseq.templates": ["TOKEN_FUNCTIONS", "PRESETS", "Cell", "Template", "Templates",
                       "TemplateFeaturizer", "expand", "preset", "MAX_OFFSET", "MAX_COLUMN",
                       "MAX_BUCKETS", "MAX_TEMPLATES", "MAX_TEMPLATE_CHARS", "HASH_SCHEME",
                       "STATE_FORMAT", "TAGS", "TransformChunks"],
    "cseq.conll": ["Sentence", "CONLLU_COLUMNS", "iter_conll", "read_conll", "iter_conllu",
                   "read_conllu", "write_conll", "iter_text", "read_text", "FORMATS",
                   "detect_format", "sniff_format", "conll_events", "conllu_blocks",
                   "ConlluBlock", "text_lines"],
    "cseq.serialize": ["MAGIC", "FORMAT_VERSION", "MAX_COUNT", "dumps", "header_field", "loads",
                       "save"],
    "cseq.decoding": ['scheme_constraints', 'NBest', 'predict', 'predict_marginals', 'predict_nbest', 'score'],
    "cseq.probability": ['path_log_prob', 'chain_entropy', 'span_probability', 'Tagged', 'annotate', 'sequence_log_prob', 'predict_confidence', 'sequence_entropy', 'span_marginals', 'predict_spans', 'SPAN_SCHEMES'],
    "cseq.explain": ['FeatureContribution', 'TokenExplanation', 'Explanation', 'explain', 'feature_names', 'max_marginals', 'top_features', 'transition_table'],
    "cseq.fitted": ['Fitted'],
    "cseq.metrics": ['SCHEMES', 'UDScore', 'ud_scores', 'accuracy', 'sequence_accuracy', 'chunks', 'chunk_scores', 'chunk_f1', 'classification_report', 'confusion_matrix', 'detect_scheme'],
    "cseq.ud_metrics": ['UDScore', 'ud_scores'],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_documented_module_keeps_its_names(module):
    mod = importlib.import_module(module)
    missing = [n for n in PUBLIC[module] if not hasattr(mod, n)]
    assert not missing, f"{module} lost {missing}"
    from_star: dict = {}
    exec(f"from {module} import *", from_star)  # noqa: S102 - what a user's star import gets
    assert set(mod.__all__) <= set(from_star)


def test_facade_names_are_the_real_objects():
    from cseq.features.featurizer import TemplateFeaturizer
    from cseq.io.conll_read import read_conll

    assert cseq.templates.TemplateFeaturizer is TemplateFeaturizer
    assert cseq.conll.read_conll is read_conll
    assert cseq.decoding.NBest is importlib.import_module("cseq.chain.decoding").NBest
    assert cseq.fitted.Fitted is importlib.import_module("cseq.chain.fitted").Fitted
    assert cseq.metrics.chunk_f1 is importlib.import_module("cseq.evaluation.metrics").chunk_f1


def test_a_pickle_naming_cseq_serialize_loads_still_loads():
    # What pickle.dumps(model) wrote in every earlier version: a call of
    # cseq.serialize.loads on the model file's bytes (protocol 3, by hand, so
    # that the test does not depend on where loads lives today).
    data = (DATA / "model_v1.cseq").read_bytes()
    blob = (b"\x80\x03ccseq.serialize\nloads\n" + b"B" + struct.pack("<I", len(data)) + data
            + b"\x85R.")
    est = pickle.loads(blob)
    assert est.to_bytes() == cseq.load(DATA / "model_v1.cseq").to_bytes()


def test_a_pickled_sequences_naming_its_old_module_still_loads():
    # Sequences lived in cseq.features.sequences; a corpus pickled then names it.
    from cseq.chain.sequences import Sequences

    corpus = cseq.FeatureVocabulary().fit_transform([[["a", "b"], ["c"]]])
    blob = pickle.dumps(corpus, protocol=2)
    assert b"ccseq.chain.sequences\nSequences\n" in blob
    old = blob.replace(b"ccseq.chain.sequences\n", b"ccseq.features.sequences\n")
    back = pickle.loads(old)
    assert type(back) is Sequences
    assert all(np.array_equal(getattr(back, f), getattr(corpus, f))
               for f in ("seq_ptr", "tok_ptr", "attr_ids"))
