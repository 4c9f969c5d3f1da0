"""cseq: fast, safe discriminative sequence labeling.

The public names: the estimators :class:`CRF`, :class:`StructuredPerceptron`,
:class:`MEMM`, :class:`HMM`, :class:`GreedyTagger`, :class:`StructuredSVM`,
:class:`PassiveAggressive` and :class:`AROW`,
the kernels :func:`viterbi`, :func:`viterbi_nbest`, :func:`loss_augmented_viterbi`
and :func:`forward_backward`, :func:`load`, the readers of other libraries' models
:func:`from_crfsuite` and :func:`from_crfpp` and the writer :func:`to_crfsuite`, and the
exceptions; the modules
:mod:`cseq.conll` (readers and writers), :mod:`cseq.metrics`,
:mod:`cseq.decoding` (constraints, n-best lists), :mod:`cseq.explain`,
:mod:`cseq.probability` and :mod:`cseq.templates` come with ``import cseq``.
"""

# The learners first, in this order: each registers itself (cseq.registry) when
# imported, and the registration order is the order of ``cseq train --help``
# and of the docs' learner table.
from cseq.learners.crf import CRF
from cseq.learners.perceptron import StructuredPerceptron
from cseq.learners.ssvm import StructuredSVM
from cseq.learners.pa import PassiveAggressive
from cseq.learners.arow import AROW
from cseq.learners.memm import MEMM
from cseq.learners.hmm import HMM
from cseq.learners.greedy import GreedyTagger
from cseq import conll, decoding, explain, metrics, probability, templates
from cseq._core._parallel import openmp_enabled
from cseq._version import __version__
from cseq.compat.crfpp_model import from_crfpp
from cseq.compat.crfsuite_model import from_crfsuite, to_crfsuite
from cseq.exceptions import (
    ConvergenceError,
    ConvergenceWarning,
    CSeqError,
    InputError,
    InputTypeError,
    ModelFormatError,
    NotFittedError,
    TrainingInterrupted,
)
from cseq.features import FeatureVocabulary
from cseq.chain.inference import forward_backward, loss_augmented_viterbi, viterbi, viterbi_nbest
from cseq.io.serialize import load
from cseq.pipeline import Pipeline, load_pipeline
from cseq.chain.sequences import Sequences
from cseq.templates import TemplateFeaturizer, Templates
from cseq.features.clusters import Clusters, brown_clusters, read_clusters
from cseq import serialize  # the public path that every earlier pickle calls
from cseq.segment.segmenter import Segmenter

__all__ = [
    "CRF",
    "StructuredPerceptron",
    "MEMM",
    "HMM",
    "GreedyTagger",
    "StructuredSVM",
    "PassiveAggressive",
    "AROW",
    "FeatureVocabulary",
    "TemplateFeaturizer",
    "Templates",
    "Sequences",
    "Segmenter",
    "Clusters",
    "brown_clusters",
    "read_clusters",
    "viterbi",
    "viterbi_nbest",
    "loss_augmented_viterbi",
    "forward_backward",
    "load",
    "Pipeline",
    "load_pipeline",
    "from_crfsuite",
    "to_crfsuite",
    "from_crfpp",
    "openmp_enabled",
    "CSeqError",
    "InputError",
    "InputTypeError",
    "NotFittedError",
    "ModelFormatError",
    "ConvergenceError",
    "ConvergenceWarning",
    "TrainingInterrupted",
    "__version__",
]
