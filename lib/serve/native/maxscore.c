/* MaxScore top-k over one shard's uncompressed postings (lib/serve/serving_index.py).
 *
 * top_k(docids, tfs, starts, lens, weights, bounds, norms, deleted, k, threshold)
 *   docids, tfs: uint32 arrays of every list of the shard, concatenated;
 *   starts, lens: int64, one per query term (its list's slice);
 *   weights: float64 idf * query tf per term; bounds: float64 upper bound of one term's score;
 *   norms: float64 per document, k1 * (1 - b + b * dl / avgdl);
 *   deleted: uint8 per document (1 = skip) or None;
 *   threshold: a document must score strictly above it (the k-th best of earlier shards).
 * Returns (scores: list[float], docs: list[int]) of at most k documents, best first, ties by docid.
 * Scores are exact double-precision BM25: pruning only skips documents whose bound cannot beat
 * the threshold (Turtle & Flood's MaxScore, document at a time).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 64

typedef struct { double s; uint32_t d; } entry;

/* heap of the k best: the root is the worst (lowest score; on equal scores the larger docid) */
static int worse(const entry *a, const entry *b) { return a->s < b->s || (a->s == b->s && a->d > b->d); }

static void sift_down(entry *h, int n, int i) {
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && worse(&h[l], &h[m])) m = l;
        if (r < n && worse(&h[r], &h[m])) m = r;
        if (m == i) return;
        entry t = h[i]; h[i] = h[m]; h[m] = t; i = m;
    }
}

static void sift_up(entry *h, int i) {
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!worse(&h[i], &h[p])) return;
        entry t = h[i]; h[i] = h[p]; h[p] = t; i = p;
    }
}

static int cmp_best(const void *a, const void *b) {
    const entry *x = a, *y = b;
    if (x->s != y->s) return x->s > y->s ? -1 : 1;
    return x->d < y->d ? -1 : (x->d > y->d);
}

/* first position >= pos in [pos, end) whose docid >= target (galloping, then binary search) */
static int64_t seek(const uint32_t *d, int64_t pos, int64_t end, uint32_t target) {
    if (pos >= end || d[pos] >= target) return pos;
    int64_t step = 1, lo = pos, hi = pos + 1;
    while (hi < end && d[hi] < target) { lo = hi; step <<= 1; hi = lo + step; }
    if (hi > end) hi = end;
    while (lo + 1 < hi) { int64_t mid = lo + (hi - lo) / 2; if (d[mid] < target) lo = mid; else hi = mid; }
    return hi;
}

static int get_buf(PyObject *o, Py_buffer *b, Py_ssize_t itemsize, const char *name) {
    if (PyObject_GetBuffer(o, b, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (b->itemsize != itemsize && b->len % itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: wrong item size", name);
        PyBuffer_Release(b);
        return -1;
    }
    return 0;
}

static PyObject *top_k(PyObject *self, PyObject *args) {
    (void) self;
    PyObject *o_doc, *o_tf, *o_start, *o_len, *o_w, *o_ub, *o_norm, *o_del;
    int k; double theta0;
    if (!PyArg_ParseTuple(args, "OOOOOOOOid", &o_doc, &o_tf, &o_start, &o_len, &o_w, &o_ub, &o_norm, &o_del, &k, &theta0))
        return NULL;
    Py_buffer bd = {0}, bt = {0}, bs = {0}, bl = {0}, bw = {0}, bu = {0}, bn = {0}, bx = {0};
    PyObject *res = NULL;
    entry *heap = NULL;
    int have_del = o_del != Py_None;
    if (get_buf(o_doc, &bd, 4, "docids") < 0) return NULL;
    if (get_buf(o_tf, &bt, 4, "tfs") < 0) goto done;
    if (get_buf(o_start, &bs, 8, "starts") < 0) goto done;
    if (get_buf(o_len, &bl, 8, "lens") < 0) goto done;
    if (get_buf(o_w, &bw, 8, "weights") < 0) goto done;
    if (get_buf(o_ub, &bu, 8, "bounds") < 0) goto done;
    if (get_buf(o_norm, &bn, 8, "norms") < 0) goto done;
    if (have_del && get_buf(o_del, &bx, 1, "deleted") < 0) goto done;
    {
        const uint32_t *D = bd.buf, *T = bt.buf;
        const int64_t *S = bs.buf, *L = bl.buf;
        const double *W = bw.buf, *U = bu.buf, *N = bn.buf;
        const uint8_t *X = have_del ? bx.buf : NULL;
        int64_t nd = bd.len / 4, ndocs = bn.len / 8;
        int n = (int)(bs.len / 8);
        if (n > MAXT || bl.len / 8 != n || bw.len / 8 != n || bu.len / 8 != n || bt.len / 4 != nd) {
            PyErr_SetString(PyExc_ValueError, "top_k: inconsistent arguments");
            goto done;
        }
        if (X && bx.len != ndocs) { PyErr_SetString(PyExc_ValueError, "top_k: deleted has the wrong length"); goto done; }
        /* terms in increasing bound order */
        int ord[MAXT], inv[MAXT]; int64_t pos[MAXT], end[MAXT]; double w[MAXT], ub[MAXT], cub[MAXT], part[MAXT];
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (L[i] <= 0) continue;
            if (S[i] < 0 || S[i] + L[i] > nd) { PyErr_SetString(PyExc_ValueError, "top_k: list out of range"); goto done; }
            ord[m++] = i;
        }
        for (int i = 1; i < m; i++) {
            int x = ord[i], j = i - 1;
            while (j >= 0 && U[ord[j]] > U[x]) { ord[j + 1] = ord[j]; j--; }
            ord[j + 1] = x;
        }
        {   /* inv[j]: the sorted position of the j-th list in the caller's order */
            int by_orig[MAXT], c = 0;
            for (int i = 0; i < n; i++) by_orig[i] = -1;
            for (int i = 0; i < m; i++) by_orig[ord[i]] = i;
            for (int i = 0; i < n; i++) if (by_orig[i] >= 0) inv[c++] = by_orig[i];
        }
        for (int i = 0; i < m; i++) {
            int t = ord[i];
            pos[i] = S[t]; end[i] = S[t] + L[t]; w[i] = W[t];
            ub[i] = U[t] * (1 + 1e-9) + 1e-12;  /* slack so rounding never prunes a document that beats theta */
            cub[i] = ub[i] + (i ? cub[i - 1] : 0);
        }
        if (k <= 0) k = 0;
        heap = malloc(sizeof(entry) * (k ? k : 1));
        if (!heap) { PyErr_NoMemory(); goto done; }
        int hn = 0;
        double theta = theta0;
        int e = 0;  /* lists [0, e) are non-essential: together they cannot beat theta */
        while (e < m && cub[e] <= theta) e++;
        Py_BEGIN_ALLOW_THREADS
        while (k > 0 && e < m) {
            uint32_t cur = UINT32_MAX; int found = 0;
            for (int i = e; i < m; i++)
                if (pos[i] < end[i] && (!found || D[pos[i]] < cur)) { cur = D[pos[i]]; found = 1; }
            if (!found) break;
            double s = 0, nm = (int64_t)cur < ndocs ? N[cur] : 1.0;
            for (int i = 0; i < m; i++) part[i] = 0;
            for (int i = e; i < m; i++)
                if (pos[i] < end[i] && D[pos[i]] == cur) {
                    double tf = T[pos[i]];
                    part[i] = w[i] * tf / (tf + nm);
                    s += part[i];
                    pos[i]++;
                }
            int alive = 1;
            for (int i = e - 1; i >= 0; i--) {
                if (s + cub[i] <= theta) { alive = 0; break; }
                pos[i] = seek(D, pos[i], end[i], cur);
                if (pos[i] < end[i] && D[pos[i]] == cur) { double tf = T[pos[i]]; part[i] = w[i] * tf / (tf + nm); s += part[i]; }
            }
            if (!alive || (X && X[cur])) continue;
            /* the score summed in the caller's term order: equal documents get bit-equal scores,
               whatever lists were essential when each was scored */
            s = 0;
            for (int j = 0; j < m; j++) s += part[inv[j]];
            if (s <= theta) continue;
            entry x = {s, cur};
            if (hn < k) { heap[hn] = x; sift_up(heap, hn); hn++; }
            else { heap[0] = x; sift_down(heap, hn, 0); }
            if (hn == k && heap[0].s > theta) {
                theta = heap[0].s;
                while (e < m && cub[e] <= theta) e++;
            }
        }
        Py_END_ALLOW_THREADS
        qsort(heap, hn, sizeof(entry), cmp_best);
        PyObject *sc = PyList_New(hn), *dc = PyList_New(hn);
        if (!sc || !dc) { Py_XDECREF(sc); Py_XDECREF(dc); goto done; }
        for (int i = 0; i < hn; i++) {
            PyList_SET_ITEM(sc, i, PyFloat_FromDouble(heap[i].s));
            PyList_SET_ITEM(dc, i, PyLong_FromUnsignedLong(heap[i].d));
        }
        res = Py_BuildValue("(NN)", sc, dc);
    }
done:
    free(heap);
    if (bd.obj) PyBuffer_Release(&bd);
    if (bt.obj) PyBuffer_Release(&bt);
    if (bs.obj) PyBuffer_Release(&bs);
    if (bl.obj) PyBuffer_Release(&bl);
    if (bw.obj) PyBuffer_Release(&bw);
    if (bu.obj) PyBuffer_Release(&bu);
    if (bn.obj) PyBuffer_Release(&bn);
    if (bx.obj) PyBuffer_Release(&bx);
    return res;
}


/* ---- CIFF decoding for the serving index build (protobuf wire format, length-prefixed messages) ---- */

static int rd_varint(const uint8_t *b, Py_ssize_t n, Py_ssize_t *p, uint64_t *out) {
    uint64_t v = 0; int shift = 0;
    while (*p < n && shift < 64) {
        uint8_t c = b[(*p)++];
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) { *out = v; return 0; }
        shift += 7;
    }
    return -1;
}

/* skip a field of wire type wt at *p; -1 when malformed */
static int skip_field(const uint8_t *b, Py_ssize_t end, Py_ssize_t *p, int wt) {
    uint64_t v;
    switch (wt) {
    case 0: return rd_varint(b, end, p, &v);
    case 1: *p += 8; return *p <= end ? 0 : -1;
    case 2: if (rd_varint(b, end, p, &v) < 0 || v > (uint64_t)(end - *p)) return -1; *p += (Py_ssize_t)v; return 0;
    case 5: *p += 4; return *p <= end ? 0 : -1;
    default: return -1;
    }
}

typedef struct { uint32_t *a; Py_ssize_t n, cap; } vec32;
static int push32(vec32 *v, uint32_t x) {
    if (v->n == v->cap) {
        Py_ssize_t c = v->cap ? v->cap * 2 : 1 << 16;
        uint32_t *a = realloc(v->a, c * sizeof(uint32_t));
        if (!a) return -1;
        v->a = a; v->cap = c;
    }
    v->a[v->n++] = x;
    return 0;
}

/* decode_lists(buf, pos, count, num_docs) -> (end, terms, lens: bytes int64, docids: bytes uint32, tfs: bytes uint32)
 * count PostingsList messages from pos; docids made absolute; raises ValueError naming the byte offset
 * of a malformed list, a docid out of [0, num_docs) or not increasing. */
static PyObject *decode_lists(PyObject *self, PyObject *args) {
    (void) self;
    Py_buffer bb; Py_ssize_t pos, count, ndocs;
    if (!PyArg_ParseTuple(args, "y*nnn", &bb, &pos, &count, &ndocs)) return NULL;
    const uint8_t *b = bb.buf; Py_ssize_t n = bb.len;
    PyObject *terms = PyList_New(count), *res = NULL;
    int64_t *lens = malloc(sizeof(int64_t) * (count ? count : 1));
    vec32 D = {0}, T = {0};
    const char *err = NULL; Py_ssize_t at = pos;
    if (!terms || !lens) { PyErr_NoMemory(); goto out; }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *term = NULL;  /* before the first goto bad, which releases it */
        uint64_t len; at = pos;
        if (rd_varint(b, n, &pos, &len) < 0 || len > (uint64_t)(n - pos)) { err = "truncated message"; goto bad; }
        Py_ssize_t end = pos + (Py_ssize_t)len;
        int64_t cnt = 0; int64_t prev = -1;
        while (pos < end) {
            uint64_t key; if (rd_varint(b, end, &pos, &key) < 0) { err = "bad field key"; goto bad; }
            int f = (int)(key >> 3), wt = (int)(key & 7);
            if (f == 1 && wt == 2) {
                uint64_t l; if (rd_varint(b, end, &pos, &l) < 0 || l > (uint64_t)(end - pos)) { err = "bad term"; goto bad; }
                Py_XDECREF(term);
                term = PyUnicode_DecodeUTF8((const char *)b + pos, (Py_ssize_t)l, "strict");
                if (!term) goto out;
                pos += (Py_ssize_t)l;
            } else if (f == 4 && wt == 2) {
                uint64_t l; if (rd_varint(b, end, &pos, &l) < 0 || l > (uint64_t)(end - pos)) { err = "bad posting"; goto bad; }
                Py_ssize_t pe = pos + (Py_ssize_t)l; uint64_t gap = 0, tf = 0;
                while (pos < pe) {
                    uint64_t k2; if (rd_varint(b, pe, &pos, &k2) < 0) { err = "bad posting field"; goto bad; }
                    if ((k2 >> 3) == 1 && (k2 & 7) == 0) { if (rd_varint(b, pe, &pos, &gap) < 0) { err = "bad docid"; goto bad; } }
                    else if ((k2 >> 3) == 2 && (k2 & 7) == 0) { if (rd_varint(b, pe, &pos, &tf) < 0) { err = "bad tf"; goto bad; } }
                    else if (skip_field(b, pe, &pos, (int)(k2 & 7)) < 0) { err = "bad posting field"; goto bad; }
                }
                int64_t d = (prev < 0 ? 0 : prev) + (int64_t)gap;
                if ((prev >= 0 && gap == 0) || d >= ndocs || tf > UINT32_MAX) { err = "docid not increasing or out of range, or tf too large"; goto bad; }
                prev = d;
                if (push32(&D, (uint32_t)d) < 0 || push32(&T, (uint32_t)tf) < 0) { PyErr_NoMemory(); goto out; }
                cnt++;
            } else if (skip_field(b, end, &pos, wt) < 0) { err = "bad field"; goto bad; }
        }
        if (!term) term = PyUnicode_FromString("");
        PyList_SET_ITEM(terms, i, term);
        lens[i] = cnt;
        continue;
    bad:
        Py_XDECREF(term);
        PyErr_Format(PyExc_ValueError, "postings list %zd at byte %zd: %s", i, at, err);
        goto out;
    }
    /* y# turns a NULL pointer into None, not b"": a shard without postings (pages without text)
     * never allocates D and T, so hand an empty buffer instead */
    res = Py_BuildValue("(nOy#y#y#)", pos, terms, (const char *)lens, (Py_ssize_t)(count * sizeof(int64_t)),
                        D.a ? (const char *)D.a : "", (Py_ssize_t)(D.n * 4),
                        T.a ? (const char *)T.a : "", (Py_ssize_t)(T.n * 4));
out:
    Py_XDECREF(terms);
    free(lens); free(D.a); free(T.a);
    PyBuffer_Release(&bb);
    return res;
}

static PyMethodDef methods[] = {
    {"decode_lists", decode_lists, METH_VARARGS, "Decode CIFF postings lists (see above)."},
    {"top_k", top_k, METH_VARARGS, "MaxScore top-k of one shard (see the file header)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "_maxscore",
    .m_doc = "MaxScore top-k over uncompressed postings.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__maxscore(void) { return PyModule_Create(&module); }
