"""The chain core: the linear-chain models and the inference every learner's model owns.

:mod:`cseq.chain.normalized` holds the posterior of one sequence and the
globally normalised chain (CRF, HMM); :mod:`cseq.chain.mapping` runs a
model over the blocks of a user's ``X``, which :mod:`cseq.decoding`,
:mod:`cseq.probability` and the estimators read through.
"""
