/* MinHash kernels of lib/neardup/minhash.py, the same arithmetic as its numpy path, in one pass.
 *
 * shingles(texts, table, klass, mult, out, counts) -> int
 *   texts: list of str, already lowercased (one group of lib.neardup.minhash's pieces);
 *   table: uint8 class (0 separator, 1 word, 2 a token alone) of every code point below 0x10000;
 *   klass: callable giving the class of a code point from 0x10000 on (rare: emoji, CJK ext B);
 *   mult: uint64 odd multiplier per shingle position (k = its length);
 *   out: writable uint32 buffer with room for every token of the group (one per character is enough);
 *   counts: writable int64 buffer, one per text: its shingles.
 *   Writes each text's shingle hashes in order into out and returns their total. A token is a run of
 *   word characters, or one "alone" character; its hash is splitmix64's finalizer of
 *   sum(cp_j * 0x100000001B3^j) (mod 2^64); a shingle's is the finalizer of sum(th_j * mult_j), top 32 bits.
 *
 * minima(sh, off, a, b, out)
 *   sh: uint32 shingle hashes; off: int64 offsets (n + 1), none of the n texts empty;
 *   a, b: uint32 per permutation; out: writable uint32 (n x perms): per text and permutation the
 *   minimum of a * x + b (mod 2^32) over its shingles x.
 *
 * The numpy path (DAILYSLICE_NATIVE_MINHASH=off) gives the same bytes: tests/neardup/test_minhash_native.py.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define POLY 0x100000001B3ULL
#define MAXK 64

static inline uint64_t mix(uint64_t z) {
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return z;
}

typedef struct {
    const uint8_t *table;
    PyObject *klass;
    const uint64_t *mult;
    int k;
    uint32_t *out;
    Py_ssize_t cap, n;   /* room and shingles written */
    uint64_t ring[MAXK]; /* the text's last k token hashes */
    Py_ssize_t toks;     /* tokens of the current text */
} state;

static int class_of(state *s, Py_UCS4 cp) {
    if (cp < 0x10000) return s->table[cp];
    PyObject *r = PyObject_CallFunction(s->klass, "I", (unsigned int)cp);
    if (r == NULL) return -1;
    long c = PyLong_AsLong(r);
    Py_DECREF(r);
    return (c == -1 && PyErr_Occurred()) ? -1 : (int)c;
}

/* one token's hash done: a shingle when the text has k tokens */
static int token(state *s, uint64_t h) {
    int k = s->k;
    s->ring[s->toks % k] = mix(h);
    s->toks++;
    if (s->toks < k) return 0;
    uint64_t acc = 0;
    Py_ssize_t first = s->toks - k;
    for (int j = 0; j < k; j++) acc += s->ring[(first + j) % k] * s->mult[j];
    if (s->n >= s->cap) {
        PyErr_SetString(PyExc_ValueError, "shingles: out has no room left");
        return -1;
    }
    s->out[s->n++] = (uint32_t)(mix(acc) >> 32);
    return 0;
}

static PyObject *shingles(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *texts, *klass;
    Py_buffer tb, mb, ob, cb;
    if (!PyArg_ParseTuple(args, "O!y*Oy*w*w*", &PyList_Type, &texts, &tb, &klass, &mb, &ob, &cb)) return NULL;
    PyObject *ret = NULL;
    Py_ssize_t n = PyList_GET_SIZE(texts);
    if (tb.len != 0x10000 || mb.len % 8 || mb.len / 8 < 1 || mb.len / 8 > MAXK || cb.len != n * 8 || ob.len % 4) {
        PyErr_SetString(PyExc_ValueError, "shingles: table of 65536 bytes, 1-64 multipliers, a count per text");
        goto done;
    }
    state s = {.table = tb.buf, .klass = klass, .mult = mb.buf, .k = (int)(mb.len / 8), .out = ob.buf, .cap = ob.len / 4};
    int64_t *counts = cb.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(texts, i);
        if (!PyUnicode_Check(t)) {
            PyErr_SetString(PyExc_TypeError, "shingles: texts must be str");
            goto done;
        }
        int kind = PyUnicode_KIND(t);
        const void *data = PyUnicode_DATA(t);
        Py_ssize_t len = PyUnicode_GET_LENGTH(t), before = s.n;
        uint64_t h = 0, pw = 1;
        int in_word = 0; /* inside a run of word characters */
        s.toks = 0;
        for (Py_ssize_t p = 0; p < len; p++) {
            Py_UCS4 cp = PyUnicode_READ(kind, data, p);
            int c = class_of(&s, cp);
            if (c < 0) goto done;
            if (c == 1) {
                if (!in_word) h = 0, pw = 1, in_word = 1;
                h += (uint64_t)cp * pw;
                pw *= POLY;
                continue;
            }
            if (in_word && token(&s, h) < 0) goto done;
            in_word = 0;
            if (c == 2 && token(&s, (uint64_t)cp) < 0) goto done;
        }
        if (in_word && token(&s, h) < 0) goto done;
        counts[i] = s.n - before;
    }
    ret = PyLong_FromSsize_t(s.n);
done:
    PyBuffer_Release(&tb);
    PyBuffer_Release(&mb);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&cb);
    return ret;
}

/* per text, the minima over its shingles; the permutations inner (they vectorise) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static void minima_of(const uint32_t *sh, const int64_t *off, Py_ssize_t n, const uint32_t *a, const uint32_t *b,
                      Py_ssize_t perms, uint32_t *out) {
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t *m = out + i * perms;
        for (Py_ssize_t p = 0; p < perms; p++) m[p] = 0xFFFFFFFFu;
        for (int64_t j = off[i]; j < off[i + 1]; j++) {
            uint32_t x = sh[j];
            for (Py_ssize_t p = 0; p < perms; p++) {
                uint32_t v = a[p] * x + b[p];
                m[p] = v < m[p] ? v : m[p];
            }
        }
    }
}

static PyObject *minima(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer sb, fb, ab, bb, ob;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*", &sb, &fb, &ab, &bb, &ob)) return NULL;
    PyObject *ret = NULL;
    Py_ssize_t n = fb.len / 8 - 1, perms = ab.len / 4, shs = sb.len / 4;
    const int64_t *off = fb.buf;
    if (n < 0 || bb.len != ab.len || ob.len != n * perms * 4 || (n >= 0 && (off[0] < 0 || off[n] > shs))) {
        PyErr_SetString(PyExc_ValueError, "minima: buffers of inconsistent sizes");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (off[i + 1] < off[i]) {
            PyErr_SetString(PyExc_ValueError, "minima: offsets go backwards");
            goto done;
        }
    Py_BEGIN_ALLOW_THREADS
    minima_of(sb.buf, off, n, ab.buf, bb.buf, perms, ob.buf);
    Py_END_ALLOW_THREADS
    ret = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&sb);
    PyBuffer_Release(&fb);
    PyBuffer_Release(&ab);
    PyBuffer_Release(&bb);
    PyBuffer_Release(&ob);
    return ret;
}

static PyMethodDef methods[] = {
    {"shingles", shingles, METH_VARARGS, "Shingle hashes of a group of lowercased texts (see the file header)."},
    {"minima", minima, METH_VARARGS, "Per text and permutation, the minimum of a*x+b (see the file header)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "lib.neardup._minhash",
    .m_doc = "MinHash kernels of lib/neardup/minhash.py (see lib/neardup/native/minhash.c).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__minhash(void) { return PyModule_Create(&module); }
