# cython: language_level=3
"""Brown clustering of integer word ids (Liang 2005's exchange-free greedy algorithm).

The kernel knows no strings: :mod:`cseq.features.clusters` interns the words,
numbers them by falling frequency and gives the adjacent-pair counts.  The
``n_clusters`` most frequent words start as clusters of their own; each
further word comes in as a new cluster and the two clusters whose merge
loses the least average mutual information (AMI) are merged, so that at most
``n_clusters + 1`` clusters are ever active.  When every word is in, the
``n_clusters`` clusters left are merged the same way down to one: those last
merges are the binary tree whose paths are the words' bit strings.

With ``P(s, t)`` the share of adjacent pairs that are cluster ``s`` then
cluster ``t`` and ``p(s)`` the share of tokens in ``s`` (the words' own
counts, as Liang's ``wcluster`` takes them),
``q(s, t) = P(s, t) log(P(s, t) / (p(s) p(t)))`` and ``AMI = sum q``.  Per
active slot ``s`` the kernel keeps ``rowcol[s]``, the AMI terms that involve
``s``, and per pair ``m[s, t] = q(s, t) + q(t, s) + (the terms of s + t
merged)``, so the loss of merging ``s`` and ``t`` is
``rowcol[s] + rowcol[t] - m[s, t]``.  A new word or a merge changes ``m``
only for pairs that touch the slots involved (Brown et al.'s update), and the
merged or new slot's pairs are recomputed: ``O(C^2)`` per word, ``O(V C^2)``
in all.  ``P log P`` is cached per pair and summed per row and column, so a
recomputed pair costs the slots both of its clusters meet (few, for a rare
new word), and a logarithm is taken only where two non-zero counts add up.

Ties are broken by the clusters' representative words (the lowest word id
in each): the pair whose ``(lower, higher)`` representatives are smallest
wins, so the result depends on nothing but the input.

References
----------
.. [1] P. F. Brown, V. J. Della Pietra, P. V. deSouza, J. C. Lai, R. L.
   Mercer, "Class-based n-gram models of natural language", Computational
   Linguistics 18(4), 1992.
.. [2] P. Liang, "Semi-supervised learning for natural language", MEng
   thesis, MIT, 2005 (section 3.2; the ``wcluster`` program).
"""

cimport cython
from libc.math cimport log

import numpy as np


cdef inline double xlogx(double p) noexcept nogil:
    return p * log(p) if p > 0.0 else 0.0


cdef inline double hsum(double a, double ha, double b, double hb) noexcept nogil:
    """``(a + b) log(a + b)`` from the cached ``a log a`` and ``b log b``: a log only if both count."""
    if a == 0.0:
        return hb
    if b == 0.0:
        return ha
    return xlogx(a + b)


@cython.auto_pickle(False)  # a run's scratch state, not a value to pickle
cdef class BrownClusterer:
    """The clustering of one corpus, run a number of merges at a time.

    Parameters
    ----------
    word_count : float64 (n_words,)
        Each word's token count, words numbered by falling count (the
        order in which they come in), every count > 0.
    pair_ptr : int64 (n_words + 1,)
        Pairs ``pair_ptr[w] .. pair_ptr[w + 1]`` are those whose later word
        (the larger id) is ``w``: counted when ``w`` comes in.
    pair_left, pair_right : int32 (n_pairs,)
        The first and second word of each adjacent pair (each distinct pair once).
    pair_count : float64 (n_pairs,)
        How often each pair occurs.
    n_clusters : int
        Clusters kept while words come in (``C``), at least 1.

    Notes
    -----
    The Python layer checks every argument (:func:`cseq.features.clusters.brown_clusters`);
    the constructor checks shapes and ranges once, then :meth:`advance` runs
    unchecked without the GIL.
    """

    cdef readonly int n_words, n_clusters, n_merges, merges_done
    cdef int n_slots, next_word, free_slot, next_node, n_leaves
    cdef double ami, _scale
    cdef const double[::1] wcount, pcount
    cdef const long long[::1] ptr
    cdef const int[::1] left, right
    cdef double[:, ::1] p2, pt, h2, ht, m, lu
    cdef double[::1] p1, lp1, rowcol
    cdef int[::1] rep, active, root, slot_of, node, mark, leaf_of_word, nz_row, nz_col
    cdef int n_nz_row, n_nz_col
    cdef double[:, ::1] sums
    cdef int[:, ::1] pairs, tree
    cdef double[::1] ami_trace

    def __init__(self, const double[::1] word_count, const long long[::1] pair_ptr,
                 const int[::1] pair_left, const int[::1] pair_right,
                 const double[::1] pair_count, int n_clusters):
        cdef Py_ssize_t V = word_count.shape[0], k, e, n_pairs
        cdef int a, b
        if V < 1 or n_clusters < 1:
            raise ValueError("need at least one word and one cluster")
        if pair_ptr.shape[0] != V + 1 or pair_ptr[0] != 0:
            raise ValueError("pair_ptr must have n_words + 1 entries, starting at 0")
        n_pairs = pair_left.shape[0]
        if pair_right.shape[0] != n_pairs or pair_count.shape[0] != n_pairs or pair_ptr[V] != n_pairs:
            raise ValueError("pair arrays differ in length")
        for k in range(V):
            if not word_count[k] > 0.0:
                raise ValueError("word counts must be > 0")
            if pair_ptr[k + 1] < pair_ptr[k]:
                raise ValueError("pair_ptr must not decrease")
            for e in range(pair_ptr[k], pair_ptr[k + 1]):
                a, b = pair_left[e], pair_right[e]
                if not (0 <= a <= k and 0 <= b <= k and (a == k or b == k)) or not pair_count[e] > 0.0:
                    raise ValueError(f"pair {e} is not a pair of word {k} with an earlier word")
        self.wcount, self.ptr, self.left, self.right, self.pcount = (
            word_count, pair_ptr, pair_left, pair_right, pair_count)
        self.n_words = <int>V
        self.n_clusters = <int>min(n_clusters, V)
        self.n_slots = self.n_clusters + 1
        self.n_merges = self.n_words - 1
        S = self.n_slots
        self.p2 = np.zeros((S, S))
        self.h2 = np.zeros((S, S))
        self.pt = np.zeros((S, S))
        self.ht = np.zeros((S, S))
        self.m = np.zeros((S, S))
        self.lu = np.zeros((S, S))
        self.p1 = np.zeros(S)
        self.lp1 = np.zeros(S)
        self.rowcol = np.zeros(S)
        self.rep = np.full(S, -1, dtype=np.int32)
        self.active = np.zeros(S, dtype=np.int32)
        self.node = np.full(S, -1, dtype=np.int32)
        self.mark = np.zeros(S, dtype=np.int32)
        self.nz_row = np.zeros(S, dtype=np.int32)
        self.nz_col = np.zeros(S, dtype=np.int32)
        self.sums = np.zeros((S, 6))
        self.root = np.arange(V, dtype=np.int32)
        self.slot_of = np.full(V, -1, dtype=np.int32)
        self.leaf_of_word = np.full(V, -1, dtype=np.int32)
        self.pairs = np.zeros((max(self.n_merges, 0), 2), dtype=np.int32)
        self.ami_trace = np.zeros(max(self.n_merges, 0))
        self.tree = np.zeros((max(self.n_clusters - 1, 0), 2), dtype=np.int32)
        with nogil:
            self._start()

    # -- the quantities ---------------------------------------------------------
    # p2[s, t] and its transpose pt[t, s] (likewise h2 and ht, the cached
    # P log P) are both kept so that every loop over a slot's neighbours reads
    # a row: the column of a (C+1)^2 matrix is a cache miss per entry.

    cdef inline double q(self, Py_ssize_t s, Py_ssize_t t) noexcept nogil:
        return self.h2[s, t] - self.p2[s, t] * (self.lp1[s] + self.lp1[t])

    cdef inline void _set(self, Py_ssize_t s, Py_ssize_t t, double p) noexcept nogil:
        self.p2[s, t] = p
        self.pt[t, s] = p

    cdef double _rowcol(self, Py_ssize_t s) noexcept nogil:
        """The AMI terms that involve slot ``s`` (its own term once)."""
        cdef Py_ssize_t d
        cdef double total = 0.0, ls = self.lp1[s]
        cdef double* ps = &self.p2[s, 0]
        cdef double* hs = &self.h2[s, 0]
        cdef double* qs = &self.pt[s, 0]
        cdef double* gs = &self.ht[s, 0]
        for d in range(self.n_slots):
            if self.active[d]:
                total += hs[d] + gs[d] - (ps[d] + qs[d]) * (ls + self.lp1[d])
        return total - self.q(s, s)

    cdef void _sums(self, Py_ssize_t s) noexcept nogil:
        """Recompute slot ``s``'s row and column sums (of P, of P log P, of P log p(d))."""
        cdef Py_ssize_t d
        cdef double rh = 0.0, rp = 0.0, rl = 0.0, ch = 0.0, cp = 0.0, cl = 0.0
        cdef double* ps = &self.p2[s, 0]
        cdef double* hs = &self.h2[s, 0]
        cdef double* qs = &self.pt[s, 0]
        cdef double* gs = &self.ht[s, 0]
        for d in range(self.n_slots):
            rh += hs[d]
            rp += ps[d]
            rl += ps[d] * self.lp1[d]
            ch += gs[d]
            cp += qs[d]
            cl += qs[d] * self.lp1[d]
        self.sums[s, 0], self.sums[s, 1], self.sums[s, 2] = rh, rp, rl
        self.sums[s, 3], self.sums[s, 4], self.sums[s, 5] = ch, cp, cl

    cdef void _nonzero(self, Py_ssize_t s) noexcept nogil:
        """List the slots where row ``s`` (``nz_row``) and column ``s`` (``nz_col``) count."""
        cdef Py_ssize_t d
        cdef int nr = 0, nc = 0
        for d in range(self.n_slots):
            if self.p2[s, d] > 0.0:
                self.nz_row[nr] = <int>d
                nr += 1
            if self.pt[s, d] > 0.0:
                self.nz_col[nc] = <int>d
                nc += 1
        self.n_nz_row, self.n_nz_col = nr, nc

    cdef double _pair(self, Py_ssize_t s, Py_ssize_t t) noexcept nogil:
        """``m[s, t]``: ``q(s, t) + q(t, s)`` plus every AMI term of ``s + t`` merged.

        ``s``'s non-zero lists must be current (:meth:`_nonzero`).  The sum
        over the other slots ``d`` of ``(P(s,d) + P(t,d)) log(...)`` is the two
        rows' sums of ``P log P`` plus a correction where both count, so the
        work is the number of slots ``s`` meets, not the number of slots.
        """
        cdef Py_ssize_t d, k
        cdef double lu = self.lu[s, t], corr_r = 0.0, corr_c = 0.0, total, pss, ls, lt
        cdef double* ps = &self.p2[s, 0]
        cdef double* pt = &self.p2[t, 0]
        cdef double* hs = &self.h2[s, 0]
        cdef double* ht = &self.h2[t, 0]
        cdef double* qs = &self.pt[s, 0]
        cdef double* qt = &self.pt[t, 0]
        cdef double* gs = &self.ht[s, 0]
        cdef double* gt = &self.ht[t, 0]
        for k in range(self.n_nz_row):
            d = self.nz_row[k]
            if pt[d] > 0.0 and d != s and d != t:
                corr_r += xlogx(ps[d] + pt[d]) - hs[d] - ht[d]
        for k in range(self.n_nz_col):
            d = self.nz_col[k]
            if qt[d] > 0.0 and d != s and d != t:
                corr_c += xlogx(qs[d] + qt[d]) - gs[d] - gt[d]
        ls, lt = self.lp1[s], self.lp1[t]
        # Rows: sums over every d, less d = s and d = t.
        total = (self.sums[s, 0] + self.sums[t, 0] - hs[s] - ht[s] - hs[t] - ht[t] + corr_r
                 - lu * (self.sums[s, 1] + self.sums[t, 1] - ps[s] - pt[s] - ps[t] - pt[t])
                 - (self.sums[s, 2] + self.sums[t, 2] - (ps[s] + pt[s]) * ls - (ps[t] + pt[t]) * lt))
        # Columns likewise.
        total += (self.sums[s, 3] + self.sums[t, 3] - gs[s] - gt[s] - gs[t] - gt[t] + corr_c
                  - lu * (self.sums[s, 4] + self.sums[t, 4] - qs[s] - qt[s] - qs[t] - qt[t])
                  - (self.sums[s, 5] + self.sums[t, 5] - (qs[s] + qt[s]) * ls - (qs[t] + qt[t]) * lt))
        pss = ps[s] + ps[t] + pt[s] + pt[t]
        return total + self.q(s, t) + self.q(t, s) + xlogx(pss) - 2.0 * pss * lu

    cdef void _refresh_slot(self, Py_ssize_t s) noexcept nogil:
        """Recompute the cached logs of slot ``s``'s row and column after its counts changed."""
        cdef Py_ssize_t d
        cdef double h
        self.lp1[s] = log(self.p1[s])
        for d in range(self.n_slots):
            h = xlogx(self.p2[s, d])
            self.h2[s, d] = h
            self.ht[d, s] = h
            h = xlogx(self.pt[s, d])
            self.ht[s, d] = h
            self.h2[d, s] = h
            if self.active[d]:
                self.lu[s, d] = self.lu[d, s] = log(self.p1[s] + self.p1[d])

    cdef void _pairs_of(self, Py_ssize_t s) noexcept nogil:
        """Recompute ``m`` for every pair with slot ``s`` (the sums must be current)."""
        cdef Py_ssize_t t
        self._nonzero(s)
        for t in range(self.n_slots):
            if self.active[t] and t != s:
                self.m[min(s, t), max(s, t)] = self._pair(s, t)

    cdef int find(self, int w) noexcept nogil:
        """The representative word of ``w``'s cluster (path halving)."""
        while self.root[w] != w:
            self.root[w] = self.root[self.root[w]]
            w = self.root[w]
        return w

    cdef void _place(self, int w, Py_ssize_t s) noexcept nogil:
        """Word ``w`` comes in as a cluster of its own in the empty slot ``s``."""
        cdef Py_ssize_t e
        cdef int a, b
        self.active[s] = 1
        self.rep[s] = w
        self.slot_of[w] = <int>s
        self.p1[s] = self.wcount[w] * self._scale
        for e in range(self.ptr[w], self.ptr[w + 1]):
            a = self.slot_of[self.find(self.left[e])]
            b = self.slot_of[self.find(self.right[e])]
            self._set(a, b, self.p2[a, b] + self.pcount[e] * self._scale)

    cdef void _start(self) noexcept nogil:
        cdef Py_ssize_t s, t
        cdef double total = 0.0
        cdef int w
        # Probabilities over the tokens counted.
        for w in range(self.n_words):
            total += self.wcount[w]
        self._scale = 1.0 / total
        for w in range(self.n_clusters):
            self._place(w, w)
        self.next_word = self.n_clusters
        self.free_slot = self.n_clusters
        for s in range(self.n_clusters):
            self._refresh_slot(s)
        for s in range(self.n_clusters):
            self._sums(s)
        for s in range(self.n_clusters):
            self.rowcol[s] = self._rowcol(s)
            self._nonzero(s)
            for t in range(s + 1, self.n_clusters):
                self.m[s, t] = self._pair(s, t)
        self.ami = 0.0
        for s in range(self.n_clusters):
            for t in range(self.n_clusters):
                self.ami += self.q(s, t)
        if self.next_word == self.n_words:
            self._leaves()

    cdef void _leaves(self) noexcept nogil:
        """Number the clusters left (the tree's leaves) by their representatives and
        give every word its leaf."""
        cdef Py_ssize_t s, best
        cdef int w, n = 0
        for s in range(self.n_slots):
            self.node[s] = -1
        while True:
            best = -1
            for s in range(self.n_slots):
                if self.active[s] and self.node[s] < 0 and (best < 0 or self.rep[s] < self.rep[best]):
                    best = s
            if best < 0:
                break
            self.node[best] = n
            n += 1
        self.n_leaves = n
        self.next_node = n
        for w in range(self.n_words):
            self.leaf_of_word[w] = self.node[self.slot_of[self.find(w)]]

    cdef void _add_word(self) noexcept nogil:
        """The next word comes in as a new cluster in the free slot."""
        cdef Py_ssize_t f = self.free_slot, s, t, S = self.n_slots
        cdef double a, b, lu, lf
        cdef double* cf = &self.pt[f, 0]  # p2[., f]
        cdef double* rf = &self.p2[f, 0]  # p2[f, .]
        cdef double* gf = &self.ht[f, 0]
        cdef double* hf = &self.h2[f, 0]
        self._place(self.next_word, f)
        self._refresh_slot(f)
        lf = self.lp1[f]
        # Pairs (s, t) that see the new slot gain its terms with s + t merged.
        for s in range(S):
            self.mark[s] = 1 if (self.active[s] and s != f and (cf[s] > 0.0 or rf[s] > 0.0)) else 0
        for s in range(S):
            if not self.mark[s]:
                continue
            for t in range(S):
                if not self.active[t] or t == f or t == s or (self.mark[t] and t < s):
                    continue
                a = cf[s] + cf[t]
                b = rf[s] + rf[t]
                lu = self.lu[s, t]
                self.m[min(s, t), max(s, t)] += (hsum(cf[s], gf[s], cf[t], gf[t]) - a * (lu + lf)
                                                 + hsum(rf[s], hf[s], rf[t], hf[t]) - b * (lu + lf))
            self.rowcol[s] += self.q(s, f) + self.q(f, s)
        for s in range(S):
            if self.mark[s]:
                self._sums(s)
        self._sums(f)
        self.rowcol[f] = self._rowcol(f)
        self._pairs_of(f)
        self.ami += self.rowcol[f]
        self.next_word += 1

    cdef void _merge_best(self) noexcept nogil:
        """Merge the active pair of least AMI loss (ties: smallest representatives)."""
        cdef Py_ssize_t s, t, i = -1, j = -1, d, S = self.n_slots, k
        cdef double loss, best = 0.0, ai, aj, bi, bj, lu, li, lj, lij, old, new, delta
        cdef int r0, r1, b0 = 0, b1 = 0, keep, gone
        cdef double* row
        for s in range(S):
            if not self.active[s]:
                continue
            row = &self.m[s, 0]
            for t in range(s + 1, S):
                if not self.active[t]:
                    continue
                loss = self.rowcol[s] + self.rowcol[t] - row[t]
                if i >= 0 and loss > best:
                    continue
                r0, r1 = min(self.rep[s], self.rep[t]), max(self.rep[s], self.rep[t])
                if i < 0 or loss < best or (r0 < b0 or (r0 == b0 and r1 < b1)):
                    best, i, j, b0, b1 = loss, s, t, r0, r1
        k = self.merges_done
        self.pairs[k, 0], self.pairs[k, 1] = b0, b1
        self.ami -= best
        self.ami_trace[k] = self.ami
        if self.n_leaves > 0:
            # The tree: the child with the smaller representative is bit 0.
            if self.rep[i] < self.rep[j]:
                self.tree[self.next_node - self.n_leaves, 0] = self.node[i]
                self.tree[self.next_node - self.n_leaves, 1] = self.node[j]
            else:
                self.tree[self.next_node - self.n_leaves, 0] = self.node[j]
                self.tree[self.next_node - self.n_leaves, 1] = self.node[i]
            self.node[i] = self.next_node
            self.next_node += 1
        # Pairs that see i or j: their terms with i and j become terms with i + j.
        cdef double* ci = &self.pt[i, 0]
        cdef double* cj = &self.pt[j, 0]
        cdef double* ri = &self.p2[i, 0]
        cdef double* rj = &self.p2[j, 0]
        cdef double* gi = &self.ht[i, 0]
        cdef double* gj = &self.ht[j, 0]
        cdef double* hi = &self.h2[i, 0]
        cdef double* hj = &self.h2[j, 0]
        li, lj, lij = self.lp1[i], self.lp1[j], self.lu[i, j]
        for s in range(S):
            self.mark[s] = 1 if (self.active[s] and s != i and s != j and (
                ci[s] > 0.0 or ri[s] > 0.0 or cj[s] > 0.0 or rj[s] > 0.0)) else 0
        for s in range(S):
            if not self.mark[s]:
                continue
            for t in range(S):
                if not self.active[t] or t == i or t == j or t == s or (self.mark[t] and t < s):
                    continue
                ai = ci[s] + ci[t]
                aj = cj[s] + cj[t]
                bi = ri[s] + ri[t]
                bj = rj[s] + rj[t]
                # Where only one of i, j counts with s + t, the P log P terms
                # cancel and only the marginal moves: no logarithm.
                if aj == 0.0 and bj == 0.0:
                    delta = (ai + bi) * (li - lij)
                elif ai == 0.0 and bi == 0.0:
                    delta = (aj + bj) * (lj - lij)
                else:
                    lu = self.lu[s, t]
                    old = (hsum(ci[s], gi[s], ci[t], gi[t]) - ai * (lu + li)
                           + hsum(ri[s], hi[s], ri[t], hi[t]) - bi * (lu + li)
                           + hsum(cj[s], gj[s], cj[t], gj[t]) - aj * (lu + lj)
                           + hsum(rj[s], hj[s], rj[t], hj[t]) - bj * (lu + lj))
                    new = (xlogx(ai + aj) - (ai + aj) * (lu + lij)
                           + xlogx(bi + bj) - (bi + bj) * (lu + lij))
                    delta = new - old
                self.m[min(s, t), max(s, t)] += delta
            # s's own terms with i and j, removed here and added back merged below.
            self.rowcol[s] -= self.q(s, i) + self.q(i, s) + self.q(s, j) + self.q(j, s)
        # j's counts into i; j's slot emptied for the next word.
        for d in range(S):
            self._set(i, d, ri[d] + rj[d])
        for d in range(S):
            self._set(d, i, ci[d] + cj[d])
        for d in range(S):
            self.p2[j, d] = self.pt[j, d] = self.p2[d, j] = self.pt[d, j] = 0.0
            self.h2[j, d] = self.ht[j, d] = self.h2[d, j] = self.ht[d, j] = 0.0
            self.m[min(j, d), max(j, d)] = 0.0
        self.p1[i] += self.p1[j]
        self.active[j] = 0
        self.rowcol[j] = 0.0
        keep, gone = self.rep[i], self.rep[j]
        if gone < keep:
            keep, gone = gone, keep
        self.root[gone] = keep
        self.slot_of[keep] = <int>i
        self.rep[i] = keep
        self.rep[j] = -1
        self.free_slot = j
        self._refresh_slot(i)
        for s in range(S):
            if self.mark[s]:
                self.rowcol[s] += self.q(s, i) + self.q(i, s)
                self._sums(s)
        self._sums(i)
        for d in range(6):
            self.sums[j, d] = 0.0
        self.rowcol[i] = self._rowcol(i)
        self._pairs_of(i)
        self.merges_done += 1

    cdef void _step(self) noexcept nogil:
        if self.next_word < self.n_words:
            self._add_word()
            self._merge_best()
            if self.next_word == self.n_words:
                self._leaves()
        else:
            self._merge_best()

    def advance(self, Py_ssize_t n_merges):
        """Run up to ``n_merges`` more merges without the GIL; returns how many ran.

        A word's coming in and the merge after it count as one.
        """
        cdef Py_ssize_t _k, n = min(max(n_merges, 0), self.n_merges - self.merges_done)
        with nogil:
            for _k in range(n):
                self._step()
        return n

    @property
    def done(self):
        """Whether every merge has run."""
        return self.merges_done == self.n_merges

    def result(self):
        """``(leaf_of_word, tree)`` once :attr:`done`.

        ``leaf_of_word`` int32 (n_words,): each word's cluster, numbered
        ``0 .. n_leaves - 1`` by representative; ``tree`` int32
        (n_leaves - 1, 2): merge ``k`` makes node ``n_leaves + k`` of the
        children ``tree[k, 0]`` (bit 0) and ``tree[k, 1]`` (bit 1).
        """
        if not self.done:
            raise ValueError("the clustering has merges left to run")
        return (np.asarray(self.leaf_of_word).copy(),
                np.asarray(self.tree)[:self.n_leaves - 1].copy())

    def losses(self):
        """The AMI loss of merging each active pair now (for the tests' exhaustive check).

        Returns ``(pairs, loss)``: int32 (n_pairs, 2), the pair's
        representatives (lower first), and float64 (n_pairs,).
        """
        cdef Py_ssize_t s, t
        pairs, loss = [], []
        for s in range(self.n_slots):
            for t in range(s + 1, self.n_slots):
                if self.active[s] and self.active[t]:
                    pairs.append(sorted((self.rep[s], self.rep[t])))
                    loss.append(self.rowcol[s] + self.rowcol[t] - self.m[s, t])
        return (np.asarray(pairs, dtype=np.int32).reshape(-1, 2),
                np.asarray(loss, dtype=np.float64))

    def trace(self):
        """``(pairs, ami)`` of the merges run so far: the representatives of the
        two clusters merged (lower first) and the AMI after each merge."""
        k = self.merges_done
        return np.asarray(self.pairs)[:k].copy(), np.asarray(self.ami_trace)[:k].copy()
