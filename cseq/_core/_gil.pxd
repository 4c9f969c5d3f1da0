# When a kernel keeps the GIL: one threshold for every kernel that decides.
cdef enum:
    # Below this many token-label cells (tens of microseconds of Viterbi), a
    # kernel called on one thread keeps the GIL: releasing and taking it back
    # for so little work hands it to any busy thread, which then holds it for
    # its switch interval (the convoy effect).  Python's own hashlib keeps it
    # for inputs under 2 KiB, NumPy for loops under 500 elements, for the same
    # reason (see cseq/chain/_decode.pyx's decode_corpus).
    GIL_MIN_WORK = 16384
