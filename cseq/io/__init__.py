"""Reading and writing: corpora in, labels out, and (after the relayout) the model container.

- :mod:`cseq.io.sources`: a path or an open file as numbered, decoded lines;
- :mod:`cseq.io.conll_read`: CoNLL, CoNLL-U and plain-text readers;
- :mod:`cseq.io.formats`: telling those formats apart from a file's first lines;
- :mod:`cseq.io.conll_write`: the CoNLL writer.

:mod:`cseq.conll` is the public path of the readers and writers.  This
``__init__`` imports nothing, so that importing one module of the package
does not import the others.
"""
