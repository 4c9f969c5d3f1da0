"""NumPy dtypes that mirror the C types of ``cseq/_core/_types.pxd``."""

import numpy as np

WEIGHT = np.dtype(np.float64)  #: weights, scores, gradients (weight_t)
VALUE = np.dtype(np.float32)  #: feature values in a packed corpus (value_t)
ATTR = np.dtype(np.int32)  #: attribute ids (attr_t)
LABEL = np.dtype(np.int32)  #: label ids, paths (label_t)
INDEX = np.dtype(np.int64)  #: offsets into corpus and weight arrays (index_t)
