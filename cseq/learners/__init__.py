"""The learners' layer: the fit frame, the training loops and the protocol a learner implements.

A plain package marker: importing it imports no learner (``import cseq``
does, through :mod:`cseq`); see :mod:`cseq.learners.protocol` for what a
learner implements, :mod:`cseq.learners.frame` for what every fit does
around its training and :mod:`cseq.learners.loops` for the shared loops.
"""
