# Shared C types of cseq, mirrored by the dtype constants in cseq/_dtypes.py.

# Weights, scores, gradients: float64, because L-BFGS on millions of
# parameters needs gradients accurate well below float32 resolution.
ctypedef double weight_t

# Feature values stored in the corpus: float32 halves the largest array of a
# packed corpus; every product is accumulated in weight_t.
ctypedef float value_t

# Attribute ids: int32 allows 2^31 distinct attributes, far beyond any
# vocabulary that fits in memory, at half the size of int64.
ctypedef int attr_t

# Label ids: int32 (also used for paths and back-pointers).
ctypedef int label_t

# Offsets into corpus and weight arrays: int64, so a corpus may hold more than
# 2^31 feature occurrences.
ctypedef long long index_t
