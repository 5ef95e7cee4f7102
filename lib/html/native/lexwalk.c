/*
 * One walk over selectolax's lexbor DOM for what lib/html/content.py needs from a page:
 * the links with their anchor texts, and the main text without boilerplate.
 *
 * The Python path (lib/html/content.py) asks lexbor's selector engine for the same things in
 * several passes (the drop tags, the boilerplate candidates, the block elements), creates a
 * Python node for every match, decomposes and inserts separators, then walks the text. Here
 * one recursive walk reads the tree as it is and builds the strings directly; the tree is not
 * changed. This is the production path; the Python path is the reference, and the results are
 * its, byte for byte (tests/html/test_native_walk.py holds the two equal on real pages and
 * generated ones). The rules' tag sets, word lists, thresholds and codes are not written here:
 * lexwalk_rules.h is generated from lib/html/rules.py (scripts/gen_lexwalk_rules.py, run by
 * setup.py build_ext). Built with -Wall -Wextra -Werror; make asan runs it under ASan and UBSan.
 *
 * Only lexbor's struct layouts and constants are used (vendored headers of the lexbor that
 * selectolax SELECTOLAX_VERSION bundles, include/), no lexbor function: nothing to link.
 * Nodes are passed as the addresses selectolax's Node.mem_id gives; lib/html/walk.py passes
 * them only when the installed selectolax is the version compiled against.
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE /* memmem */
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "lexbor/dom/interfaces/element.h"
#include "lexbor/dom/interfaces/attr.h"
#include "lexbor/dom/interfaces/character_data.h"
#include "lexbor/tag/const.h"

#include "lexwalk_rules.h" /* the rules' tables, SELECTOLAX_VERSION, SEP: generated from lib/html/rules.py */

#define API 8 /* lib/html/walk.py's API: what main_text returns (2: text and the body's size; 3: main_html too; 4: links() tells the head fields outside <head>; 5: links carry their rel; 6: links() tells discussion markup, bit 16; 7: the module tells the digest of its rules, RULES; 8: links() collects the embeds with a resolver) */

/* ------------------------------------------------------------------ a growing buffer */
typedef struct {
    char *data;
    size_t len, cap;
    int failed;
} buf_t;

static int buf_reserve(buf_t *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra) cap *= 2;
    char *d = realloc(b->data, cap);
    if (d == NULL) { b->failed = 1; return -1; }
    b->data = d;
    b->cap = cap;
    return 0;
}

static inline void buf_put(buf_t *b, const char *s, size_t n) {
    if (n == 0) return;  /* an empty buffer has no data: memcpy must not get its NULL, even for 0 bytes */
    if (buf_reserve(b, n) == 0) { memcpy(b->data + b->len, s, n); b->len += n; }
}

static inline void buf_byte(buf_t *b, char c) {
    if (buf_reserve(b, 1) == 0) b->data[b->len++] = c;
}

/* ------------------------------------------------------------------ whitespace as str.split() sees it */
/* Length of the whitespace character at p (what Python's str.isspace() calls whitespace:
 * \t-\r, \x1c-\x1f, space, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F,
 * U+205F, U+3000), or 0. */
static inline int ws_len(const unsigned char *p, const unsigned char *end) {
    unsigned char c = p[0];
    if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
    if (c == 0xc2) return end - p >= 2 && (p[1] == 0x85 || p[1] == 0xa0) ? 2 : 0;
    if (c == 0xe1) return end - p >= 3 && p[1] == 0x9a && p[2] == 0x80 ? 3 : 0;
    if (c == 0xe2) {
        if (end - p < 3) return 0;
        if (p[1] == 0x80) return (p[2] >= 0x80 && p[2] <= 0x8a) || p[2] == 0xa8 || p[2] == 0xa9 || p[2] == 0xaf ? 3 : 0;
        return p[1] == 0x81 && p[2] == 0x9f ? 3 : 0;
    }
    if (c == 0xe3) return end - p >= 3 && p[1] == 0x80 && p[2] == 0x80 ? 3 : 0;
    return 0;
}

/* ------------------------------------------------------------------ collapsing writer */
/* Writes text with whitespace runs collapsed to one space and each line stripped; SEP ends a
 * line, and lines without content are left out: "\n".join(l for l in (" ".join(p.split())
 * for p in s.replace(SHY, "").split(SEP)) if l), as maintext._write computes it. */
typedef struct {
    buf_t out;
    int content;  /* the current line has content */
    int space;    /* whitespace since the last content character */
    int newline;  /* a line with content ended since */
    int shy;      /* soft hyphens are left out (the main text; anchor text keeps them, as anchor_text) */
} writer_t;

static inline void w_break(writer_t *w) {
    if (w->content) { w->newline = 1; w->content = 0; }
    w->space = 0;
}

static inline void w_space(writer_t *w) {
    if (w->content) w->space = 1;
}

/* the characters that break a line in text: none, SEP, SEP and '\n' (inside <pre>) */
enum { NO_BREAKS, SEP_BREAKS, PRE_BREAKS };

static inline int is_break(unsigned char c, int breaks) {
    return (breaks && c == SEP) || (breaks == PRE_BREAKS && c == '\n');
}

/* maintext.SHY: a soft hyphen (U+00AD, UTF-8 C2 AD), left out of the text */
static inline int is_shy(const unsigned char *p, const unsigned char *end) {
    return p[0] == 0xc2 && end - p >= 2 && p[1] == 0xad;
}

static void w_text(writer_t *w, const unsigned char *p, size_t n, int breaks) {
    const unsigned char *end = p + n;
    while (p < end) {
        if (is_break(*p, breaks)) { w_break(w); p++; continue; }
        if (w->shy && is_shy(p, end)) { p += 2; continue; }
        int k = ws_len(p, end);
        if (k) { w_space(w); p += k; continue; }
        const unsigned char *start = p;  /* a run of content bytes, copied at once */
        do { p++; } while (p < end && !is_break(*p, breaks) && !ws_len(p, end) && !(w->shy && is_shy(p, end)));
        if (w->newline) { buf_byte(&w->out, '\n'); w->newline = 0; }
        else if (w->space) buf_byte(&w->out, ' ');
        w->space = 0;
        w->content = 1;
        buf_put(&w->out, (const char *) start, (size_t) (p - start));
    }
}

/* ------------------------------------------------------------------ nodes and attributes */
static inline int is_element(const lxb_dom_node_t *n) { return n->type == LXB_DOM_NODE_TYPE_ELEMENT; }

/* the lowercase local name of an attribute: lexbor's static table for the names it knows,
 * the document's hash entry (the id is its address) for the others */
static inline const lexbor_hash_entry_t *attr_entry(const lxb_dom_attr_t *a) {
    uintptr_t id = a->node.local_name;
    return id > LXB_DOM_ATTR__LAST_ENTRY ? &((const lxb_dom_attr_data_t *) id)->entry : NULL;
}

static int attr_named(const lxb_dom_attr_t *a, const char *name, size_t len) {
    const lexbor_hash_entry_t *e = attr_entry(a);
    if (e == NULL || e->length != len) return 0;
    const lxb_char_t *s = e->length <= LEXBOR_HASH_SHORT_SIZE ? e->u.short_str : e->u.long_str;
    return memcmp(s, name, len) == 0;
}

/* value of the attribute that selectolax's node.attributes lists under ``id`` (unprefixed) */
static const lexbor_str_t *attr_value(const lxb_dom_element_t *el, uintptr_t id, int *present) {
    for (const lxb_dom_attr_t *a = el->first_attr; a != NULL; a = a->next) {
        if (a->node.local_name == id && a->node.prefix == 0) { *present = 1; return a->value; }
    }
    *present = 0;
    return NULL;
}

static int has_attr_id(const lxb_dom_element_t *el, uintptr_t id) {
    for (const lxb_dom_attr_t *a = el->first_attr; a != NULL; a = a->next)
        if (a->node.local_name == id) return 1;
    return 0;
}

static inline int value_is(const lexbor_str_t *v, const char *s) {
    size_t n = strlen(s);
    return v != NULL && v->length == n && memcmp(v->data, s, n) == 0;
}

/* ---------------------------------------------- the main text's rules: lib/html/boilerplate.py, roots.py */
/* the tag sets, word lists, thresholds and codes are lexwalk_rules.h's (lib/html/rules.py) */
enum { ROOT_OUT, ROOT_IN, ROOT_ABOVE };

static int in_list(const lexbor_str_t *v, const char *const *list) {
    for (; *list; list++)
        if (value_is(v, *list)) return 1;
    return 0;
}

/* the hidden attribute (any namespace, as lexbor's [hidden] matched) */
static int is_invisible(const lxb_dom_element_t *el, uintptr_t tag) {
    if (is_invisible_tag(tag)) return 1;
    for (const lxb_dom_attr_t *a = el->first_attr; a != NULL; a = a->next)
        if (a->node.local_name > LXB_DOM_ATTR__LAST_ENTRY && attr_named(a, "hidden", 6)) return 1;
    return 0;
}

/* [role=navigation|banner|contentinfo|complementary|search], [aria-hidden=true]: the values as
 * selectolax's node.attributes gives them (the first unprefixed attribute of the name) */
static int has_boiler_attr(const lxb_dom_element_t *el) {
    int role = 0, aria = 0;  /* the first of each name counts */
    for (const lxb_dom_attr_t *a = el->first_attr; a != NULL; a = a->next) {
        if (a->node.local_name <= LXB_DOM_ATTR__LAST_ENTRY || a->node.prefix != 0) continue;
        if (!role && attr_named(a, "role", 4)) {
            if (in_list(a->value, BOILER_ROLES)) return 1;
            role = 1;
        }
        else if (!aria && attr_named(a, "aria-hidden", 11)) {
            if (value_is(a->value, "true")) return 1;
            aria = 1;
        }
    }
    return 0;
}

/* the UTF-8 strings of W_HEADINGS (lib.html.headings.BOILER_HEADINGS, read from that module when
 * this one is imported: one list, not a copy), kept alive here */
static PyObject *heading_bytes = NULL;

/* a word list with each word's length and a hash index: every class and id token of a page, and
 * every part of one, is looked up in these lists; scanning them with strlen over each word was
 * most of the main text's time (a third of a heavy page's). Indexed when the module is imported
 * (words_index). */
typedef struct {
    const char *const *words;  /* NULL-terminated */
    size_t *lens;
    int32_t *slots;  /* open addressing: word index + 1, 0 for an empty slot */
    uint32_t mask;   /* the number of slots - 1 (a power of 2) */
} wordlist_t;

static wordlist_t W_BOILER = {.words = BOILER_WORDS}, W_STATE = {.words = STATE_PARTS},
                  W_NOPRINT = {.words = NOPRINT_WORDS}, W_NOPRINT_PARTS = {.words = NOPRINT_PARTS},
                  W_HEADINGS = {.words = NULL};  /* W_HEADINGS: load_headings, from Python */

static uint32_t fnv1a(const char *p, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char) p[i]) * 16777619u;
    return h;
}

/* lens (given, or strlen of each word when NULL) and the hash index of w; -1 on no memory */
static int words_index(wordlist_t *w, size_t *lens) {
    size_t count = 0, size = 8;
    while (w->words[count]) count++;
    while (size < 2 * count) size *= 2;
    w->lens = lens != NULL ? lens : PyMem_Calloc(count + 1, sizeof(size_t));
    w->slots = PyMem_Calloc(size, sizeof(int32_t));
    if (w->lens == NULL || w->slots == NULL) { PyErr_NoMemory(); return -1; }
    w->mask = (uint32_t) size - 1;
    for (size_t k = 0; k < count; k++) {
        if (lens == NULL) w->lens[k] = strlen(w->words[k]);
        uint32_t i = fnv1a(w->words[k], w->lens[k]) & w->mask;
        while (w->slots[i]) i = (i + 1) & w->mask;
        w->slots[i] = (int32_t) k + 1;
    }
    return 0;
}

static int word_in(const char *p, size_t n, const wordlist_t *w) {
    for (uint32_t i = fnv1a(p, n) & w->mask; w->slots[i]; i = (i + 1) & w->mask) {
        size_t k = (size_t) w->slots[i] - 1;
        if (w->lens[k] == n && memcmp(w->words[k], p, n) == 0) return 1;
    }
    return 0;
}

/* boilerplate.boiler_token on one class/id token: lowercased as str.lower() does for what can
 * equal the ASCII words (ASCII letters, U+212A KELVIN SIGN -> 'k'; other bytes kept) */
static int boiler_token(const unsigned char *p, size_t n) {
    char small[256], *low = n <= sizeof small ? small : malloc(n);
    if (low == NULL) return 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (c == 0xe2 && i + 2 < n && p[i + 1] == 0x84 && p[i + 2] == 0xaa) { low[m++] = 'k'; i += 2; }
        else low[m++] = (char) (c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    int hit = word_in(low, m, &W_BOILER) || word_in(low, m, &W_NOPRINT);
    if (!hit) {
        /* parts split at '-' and '_': "print" with a part that negates it; else the first part a word
         * and not a state, or a later part a word with no state part before it */
        int print = 0, noprint = 0, state = 0, word = 0, k = 0;
        for (size_t i = 0, start = 0; i <= m; i++)
            if (i == m || low[i] == '-' || low[i] == '_') {
                const char *q = low + start;
                size_t len = i - start;
                if (len == 5 && memcmp(q, "print", 5) == 0) print = 1;
                if (word_in(q, len, &W_NOPRINT_PARTS)) noprint = 1;
                if (k > 0 && !word && !state) {  /* a later part: the first decides alone */
                    if (word_in(q, len, &W_STATE)) state = 1;
                    else if (word_in(q, len, &W_BOILER)) word = 1;
                }
                if (k == 0) {
                    if (i == m) break;  /* one part: the whole token, looked up above */
                    if (word_in(q, len, &W_STATE)) state = 2;  /* "has-nav", "no-sidebar" */
                    else if (word_in(q, len, &W_BOILER)) word = 2;
                }
                k++;
                start = i + 1;
            }
        hit = (print && noprint) || (k > 1 && state != 2 && word);
    }
    if (low != small) free(low);
    return hit;
}

static int boiler_value(const lexbor_str_t *v) {
    if (v == NULL || v->data == NULL) return 0;
    const unsigned char *p = v->data, *end = p + v->length;
    while (p < end) {
        int k = ws_len(p, end);
        if (k) { p += k; continue; }
        const unsigned char *start = p;
        do { p++; } while (p < end && !ws_len(p, end));
        if (boiler_token(start, (size_t) (p - start))) return 1;
    }
    return 0;
}


/* boilerplate.is_boilerplate: a boilerplate tag or attribute (BY_TAG), class or id word (BY_WORD), or
 * mostly link text (BY_LINKS); chars and links: the element's own (outside the boilerplate blocks in it) */
static int is_boilerplate(const lxb_dom_element_t *el, uintptr_t tag, uint64_t chars, uint64_t links, uint64_t rawpar) {
    /* a <header> with paragraph text of its own (SIB_MIN, SIB_NUM/SIB_DEN): an article's lead */
    if ((is_boiler_tag(tag) || has_boiler_attr(el))
        && !(tag == LXB_TAG_HEADER && rawpar >= SIB_MIN && rawpar * SIB_DEN >= chars * SIB_NUM))
        return BY_TAG;
    if (!is_class_exempt_tag(tag)) {
        int present;
        if (boiler_value(attr_value(el, LXB_DOM_ATTR_CLASS, &present))) return BY_WORD;
        if (boiler_value(attr_value(el, LXB_DOM_ATTR_ID, &present))) return BY_WORD;
    }
    return !is_link_exempt_tag(tag) && chars > 0 && links * LINK_DEN > chars * LINK_NUM ? BY_LINKS : NO_RULE;
}

/* ------------------------------------------------------------------ main text */
/* the node after n in document order under root, skipping n's children unless descend */
static inline const lxb_dom_node_t *next_node(const lxb_dom_node_t *n, const lxb_dom_node_t *root, int descend) {
    if (descend && n->first_child != NULL) return n->first_child;
    while (n != root && n->next == NULL) n = n->parent;
    return n == root ? NULL : n->next;
}

/* non-whitespace characters (code points) of UTF-8 text */
static uint32_t visible_chars(const unsigned char *p, size_t n) {
    const unsigned char *end = p + n;
    uint32_t count = 0;
    while (p < end) {
        int k = ws_len(p, end);
        if (k) { p += k; continue; }
        count++;
        p++;
        while (p < end && (*p & 0xc0) == 0x80) p++;
    }
    return count;
}

/* lib.html.headings: heading_key(node.text()) in BOILER_HEADINGS: the text of all text nodes under n,
 * whitespace runs (ws_len: str.split's) collapsed to one space, ASCII and Latin-1 capitals
 * (U+00C0-U+00DE but U+00D7) lowered, trailing " :.!?" cut */
static int is_boiler_heading(const lxb_dom_node_t *n) {
    char key[256];
    size_t m = 0;
    int space = 0;
    const lxb_dom_node_t *c = n->first_child;
    while (c != NULL) {
        if (c->local_name == LXB_TAG__TEXT) {
            const lexbor_str_t *t = &((const lxb_dom_character_data_t *) c)->data;
            const unsigned char *p = t->data, *end = p ? p + t->length : NULL;
            while (p != NULL && p < end) {
                int k = ws_len(p, end);
                if (k) { space = m > 0; p += k; continue; }
                if (m + 3 >= sizeof key) return 0;  /* longer than any heading of the list */
                if (space) { key[m++] = ' '; space = 0; }
                unsigned char b = *p++;
                if (b >= 'A' && b <= 'Z') b += 32;
                key[m++] = (char) b;
                if (b == 0xc3 && p < end && *p >= 0x80 && *p <= 0x9e && *p != 0x97) { key[m++] = (char) (*p + 0x20); p++; }
            }
        }
        if (c->first_child != NULL) { c = c->first_child; continue; }
        while (c != n && c->next == NULL) c = c->parent;
        if (c == n) break;
        c = c->next;
    }
    while (m > 0 && strchr(" :.!?", key[m - 1]) != NULL) m--;
    return word_in(key, m, &W_HEADINGS);
}

/* one element's counts: lib/html/stat.py's Stat holds the same fields by the same names (but root) */
typedef struct {
    uint32_t size, chars, links, par, rawpar;  /* rawpar: paragraph chars, those in boilerplate too */
    int boiler;  /* the rule that marks it (NO_RULE: none) */
    uint32_t clean;  /* visible chars outside links and boilerplate blocks */
    int heading;  /* h1-h6 (boilerplate.HEADING_TAGS) */
    int item;  /* one of boilerplate.TEASER_TAGS */
    int root;  /* ROOT_IN: a content root (roots.content_roots), ROOT_ABOVE: an ancestor of one */
    uint32_t own, ownlinks;  /* visible and link chars outside boilerplate blocks (is_boilerplate judges them) */
    uintptr_t tag;  /* its tag (an item of a list of items has its siblings' tag: lib/html/link_listings.py) */
    int lead;  /* its first visible text is link text */
    int keep;  /* KEEP_ITEM, KEEP_LIST: listing keeps it whatever rule marks it */
} stat_t;

typedef struct {
    stat_t *s;
    size_t n, cap;
    uint64_t total, ptotal, rtotal, ctotal;
} stats_t;

/* boilerplate.is_teasers: the element i is a teaser list (its children with text are TEASER_N or more,
 * all of TEASER_TAGS, each short and partly link text) */
static int is_teasers(const stat_t *s, size_t i) {
    size_t j = i + 1, end = i + s[i].size, n = 0;
    for (; j < end; j += s[j].size) {
        if (!s[j].chars) continue;
        if (!(s[j].item && s[j].chars < TEASER_MAX && (uint64_t) s[j].links * TEASER_DEN >= s[j].chars)) return 0;
        n++;
    }
    return n >= TEASER_N;
}

/* boilerplate.is_residue: what remains of boilerplate blocks or a teaser list (BY_LINKS), or a heading
 * that trailing marked (TRAILING), or what headed marked (HEADED), or listing (ITEM_META) */
static int is_residue(uintptr_t tag, const stat_t *s) {
    if (s->boiler == TRAILING || s->boiler == HEADED || s->boiler == ITEM_META) return s->boiler;
    if (s->boiler == TEASERS) return BY_LINKS;
    return is_block_tag(tag) && s->clean < RESIDUE_MAX && (uint64_t) s->clean * RESIDUE_DEN < s->chars
        ? BY_LINKS : NO_RULE;
}

/* boilerplate.is_protected: no rule drops an element holding more than half of the body's visible
 * characters, nor one that only a class or id word or its links mark and that holds more than
 * half of the page's paragraph text, nor one that listing keeps */
static int is_protected(const stat_t *s, int rule, const stats_t *st) {
    return s->keep || (uint64_t) s->chars * 2 > st->total
        || (rule >= BY_WORD && st->rtotal >= ROOT_MIN && (uint64_t) s->rawpar * 2 > st->rtotal);
}

typedef struct { size_t i; int kind; } open_t;

static int grow(void **data, size_t *cap, size_t need, size_t item) {
    if (need <= *cap) return 0;
    size_t cap2 = *cap ? *cap * 2 : 256;
    while (cap2 < need) cap2 *= 2;
    void *d = realloc(*data, cap2 * item);
    if (d == NULL) return -1;
    *data = d;
    *cap = cap2;
    return 0;
}

/* measure.measure: a stat_t per element under body (lib.html.stat.Stat, the same field names) */
static int measure(stats_t *st, const lxb_dom_node_t *body) {
    open_t *stack = NULL;
    size_t depth = 0, stack_cap = 0;
    int in_link = 0, in_par = 0, rc = 0;
    size_t fresh = 0;  /* the open elements from this depth on have seen no text yet: the next text leads them */
    const lxb_dom_node_t *n = body->first_child;
    while (n != NULL) {
        int descend = 0;
        if (n->local_name == LXB_TAG__TEXT) {
            const lexbor_str_t *s = &((const lxb_dom_character_data_t *) n)->data;
            uint32_t k = s->data != NULL ? visible_chars(s->data, s->length) : 0;
            if (k) {
                for (; fresh < depth; fresh++) st->s[stack[fresh].i].lead = in_link > 0;
                if (depth) {
                    stat_t *top = &st->s[stack[depth - 1].i];
                    top->chars += k;
                    top->own += k;
                    if (in_link) { top->links += k; top->ownlinks += k; }
                    else {
                        top->clean += k;
                        if (in_par) { top->par += k; top->rawpar += k; }
                    }
                }
                else { st->total += k; st->ctotal += k; }
            }
        }
        else if (is_element(n)) {
            const lxb_dom_element_t *el = (const lxb_dom_element_t *) n;
            uintptr_t tag = n->local_name;
            if (grow((void **) &st->s, &st->cap, st->n + 1, sizeof(stat_t)) < 0) { rc = -1; break; }
            size_t i = st->n++;
            st->s[i] = (stat_t) {.size = 1, .boiler = NO_RULE, .heading = is_heading_tag(tag),
                                 .item = is_teaser_tag(tag), .tag = tag};
            if (!is_invisible(el, tag) && n->first_child != NULL) {
                if (grow((void **) &stack, &stack_cap, depth + 1, sizeof(open_t)) < 0) { rc = -1; break; }
                int kind = (tag == LXB_TAG_A && has_attr_id(el, LXB_DOM_ATTR_HREF)) + 2 * is_paragraph_tag(tag);
                stack[depth++] = (open_t) {i, kind};
                in_link += kind & 1;
                in_par += kind >> 1;
                descend = 1;
            }
        }
        if (descend) { n = n->first_child; continue; }
        while (n->next == NULL) {
            n = n->parent;
            if (n == NULL || n == body) goto done;
            open_t o = stack[--depth];
            if (fresh > depth) fresh = depth;
            stat_t *s = &st->s[o.i];
            s->size = (uint32_t) (st->n - o.i);
            in_link -= o.kind & 1;
            in_par -= o.kind >> 1;
            if (!is_protected_tag(n->local_name)) {
                s->boiler = is_boilerplate((const lxb_dom_element_t *) n, n->local_name, s->own, s->ownlinks, s->rawpar);
                if (s->boiler == NO_RULE) s->boiler = is_residue(n->local_name, s);
                if (s->boiler == NO_RULE && s->heading && s->chars < HEADING_KEY_MAX && is_boiler_heading(n))
                    s->boiler = HEADED;
                if (s->boiler == NO_RULE && is_teasers(st->s, o.i)) s->boiler = TEASERS;
            }
            uint32_t par = s->boiler ? 0 : s->par, clean = s->boiler ? 0 : s->clean;
            if (depth) {
                stat_t *parent = &st->s[stack[depth - 1].i];
                parent->chars += s->chars;
                parent->links += s->links;
                if (!s->boiler) { parent->own += s->own; parent->ownlinks += s->ownlinks; }
                parent->par += par;
                parent->rawpar += s->rawpar;
                parent->clean += clean;
            }
            else {
                st->total += s->chars;
                st->ptotal += par;
                st->rtotal += s->rawpar;
                st->ctotal += clean;
            }
        }
        n = n->next;
    }
done:
    free(stack);
    return rc;
}

/* measure.headed: what follows a HEADED heading in its parent up to the next heading, unless it
 * holds HEADED_MAX clean chars, is HEADED; its paragraph and clean chars leave the ancestors that
 * counted them: those from the innermost marked one (it passes none up) down, else all and the body's */
static void headed(stats_t *st) {
    for (size_t h = 0; h < st->n; h++) {
        if (st->s[h].boiler != HEADED || !st->s[h].heading) continue;
        size_t k = 0, end = st->n, from = 0, j;
        int marked = 0;  /* an ancestor is marked: from is the innermost such */
        while (k < h) {  /* down the chain of h's ancestors, skipping siblings whole */
            if (k + st->s[k].size > h) {
                if (st->s[k].boiler) { from = k; marked = 1; }
                end = k + st->s[k].size;
                k++;
            }
            else k += st->s[k].size;
        }
        uint64_t clean = 0;
        for (j = h + st->s[h].size; j < end && !st->s[j].heading; j += st->s[j].size)
            if (!st->s[j].boiler) clean += st->s[j].clean;
        if (clean >= HEADED_MAX) continue;
        for (j = h + st->s[h].size; j < end && !st->s[j].heading; j += st->s[j].size) {
            stat_t *t = &st->s[j];
            if (t->boiler) continue;
            t->boiler = HEADED;
            k = from;
            while (k < h) {
                if (k + st->s[k].size > h) { st->s[k].par -= t->par; st->s[k].clean -= t->clean; k++; }
                else k += st->s[k].size;
            }
            if (!marked) { st->ptotal -= t->par; st->ctotal -= t->clean; }
        }
    }
}

/* measure.unprotect: elements the write walk never drops (is_protected) are no boilerplate;
 * their paragraph and clean characters count in their ancestors (and the body's) again */
static void unprotect(stats_t *st) {
    for (size_t i = 0; i < st->n; i++) {
        stat_t *s = &st->s[i];
        if (!s->boiler || !is_protected(s, s->boiler, st)) continue;
        s->boiler = NO_RULE;
        size_t k = 0;
        while (k < i) {  /* down the chain of i's ancestors, skipping siblings whole */
            if (k + st->s[k].size > i) { st->s[k].par += s->par; st->s[k].clean += s->clean; k++; }
            else k += st->s[k].size;
        }
        st->ptotal += s->par;
        st->ctotal += s->clean;
    }
}

/* roots.content_root: the deepest element outside boilerplate blocks holding ROOT_NUM/ROOT_DEN
 * of the body's paragraph characters (clean: of its clean characters), or -1 */
static long content_root(const stats_t *st, int clean) {
    uint64_t whole = clean ? st->ctotal : st->ptotal;
    if (whole < ROOT_MIN) return -1;
    long root = -1;
    size_t i = 0;
    while (i < st->n) {
        const stat_t *s = &st->s[i];
        if (s->boiler) { i += s->size; continue; }
        if ((uint64_t) (clean ? s->clean : s->par) * ROOT_DEN >= whole * ROOT_NUM) root = (long) i;
        i++;
    }
    return root;
}

/* measure.trailing: headings under RESIDUE_MAX clean chars that only dropped blocks (one with
 * text at least) follow in their parent, a parent without text of its own, are TRAILING */
static int trailing(stats_t *st) {
    size_t *kids = malloc((st->n ? st->n : 1) * sizeof(size_t));
    if (kids == NULL) return -1;
    for (long p = -1; p < (long) st->n; p++) {
        size_t j, end, m = 0;
        uint64_t direct;
        if (p < 0) { j = 0; end = st->n; direct = st->ctotal; }
        else {
            const stat_t *s = &st->s[p];
            if (s->size == 1 || s->boiler) continue;
            j = (size_t) p + 1; end = (size_t) p + s->size; direct = s->clean;
        }
        for (; j < end; j += st->s[j].size) {
            kids[m++] = j;
            if (!st->s[j].boiler) direct -= st->s[j].clean;
        }
        if (direct) continue;
        int dropped = 0;
        while (m-- > 0) {
            stat_t *t = &st->s[kids[m]];
            if (t->boiler) { if (t->chars) dropped = 1; }
            else if (t->clean) {
                if (!(dropped && t->heading && t->clean < RESIDUE_MAX)) break;
                t->boiler = TRAILING;
            }
        }
    }
    free(kids);
    return 0;
}

/* marks the ancestors of element r as ancestors of a content root (ROOT_ABOVE) */
static void mark_above(stats_t *st, size_t r) {
    size_t k = 0;
    while (k < r) {  /* down the chain of r's ancestors, skipping siblings whole */
        if (k + st->s[k].size > r) { if (!st->s[k].root) st->s[k].root = ROOT_ABOVE; k++; }
        else k += st->s[k].size;
    }
}

/* roots.content_roots: the content root and the siblings of it and of its parent (SIB_LEVELS)
 * with paragraph text of their own, or before it clean text (LEAD_MIN, LEAD_LEVELS) (or the root the clean text locates, alone, when the body has
 * less than ROOT_MIN paragraph chars or their root holds less than CLEAN_NUM/CLEAN_DEN of the
 * clean text), marked ROOT_IN in st with their
 * ancestors ROOT_ABOVE; 0 when the body is the root */
static int content_roots(stats_t *st) {
    long root = content_root(st, 0);
    if (st->ptotal < ROOT_MIN || (root >= 0 && (uint64_t) st->s[root].clean * CLEAN_DEN < st->ctotal * CLEAN_NUM))
        root = content_root(st, 1);  /* alone: paragraphs do not say what the page's text is */
    else if (root >= 0) {
        long inner = root;
        for (int level = 0; level < SIB_LEVELS || level < LEAD_LEVELS; level++) {
            long parent = -1;
            size_t k = 0, j, end;
            while ((long) k < inner) {  /* inner's parent: the last of its ancestors */
                if ((long) (k + st->s[k].size) > inner) { parent = (long) k; k++; }
                else k += st->s[k].size;
            }
            if (parent >= 0) { j = (size_t) parent + 1; end = (size_t) parent + st->s[parent].size; }
            else { j = 0; end = st->n; }
            for (; j < end; j += st->s[j].size) {
                const stat_t *s = &st->s[j];
                if ((long) j != inner && !s->boiler
                    && ((level < SIB_LEVELS && s->par >= SIB_MIN
                         && (uint64_t) s->par * SIB_DEN >= (uint64_t) s->chars * SIB_NUM)
                        || (level < LEAD_LEVELS && (long) j < inner && s->clean >= LEAD_MIN
                            && (uint64_t) s->clean * SIB_DEN >= (uint64_t) s->chars * SIB_NUM))) {
                    st->s[j].root = ROOT_IN;
                    mark_above(st, j);
                }
            }
            if (parent < 0) break;
            inner = parent;
        }
    }
    if (root < 0) return 0;
    st->s[root].root = ROOT_IN;
    mark_above(st, (size_t) root);
    return 1;
}

/* ------------------------------------------------------------------ listings (lib/html/link_listings.py) */
/* listing.is_item_list: LIST_N children or more with text, all of one tag of LIST_TAGS,
 * LIST_LED_NUM/LIST_LED_DEN of them led by a link, LIST_TITLE link chars a led one, none holding half
 * of its chars, 1/LIST_CLEAN_DEN of its text outside links */
static int is_item_list(const stat_t *s, size_t i) {
    size_t j = i + 1, end = i + s[i].size;
    uint64_t n = 0, led = 0, links = 0, most = 0;
    uintptr_t tag = 0;
    for (; j < end; j += s[j].size) {
        if (!s[j].chars) continue;
        if (s[j].chars > most) most = s[j].chars;
        if (!tag) {
            tag = s[j].tag;
            if (!is_list_tag(tag)) return 0;
        }
        else if (s[j].tag != tag) return 0;
        n++;
        if (s[j].lead) { led++; links += s[j].links; }
    }
    /* items alike: none holds half of the list (a page's layout blocks, its article among them, are no list) */
    return n >= LIST_N && led * LIST_LED_DEN >= n * LIST_LED_NUM && links >= led * LIST_TITLE
        && most * 2 < s[i].chars && (uint64_t) (s[i].chars - s[i].links) * LIST_CLEAN_DEN >= s[i].chars;
}

/* listing._title_child: the first child with text led by a link of LIST_TITLE chars in all, else the
 * first led by a link; -1: none */
static long title_child(const stat_t *s, size_t i) {
    long first = -1;
    for (size_t j = i + 1, end = i + s[i].size; j < end; j += s[j].size)
        if (s[j].chars && s[j].lead) {
            if (s[j].links >= LIST_TITLE) return (long) j;
            if (first < 0) first = (long) j;
        }
    return first;
}

/* listing._keep_item: keep item i and the chain down to its title; beside it, ITEM_META the parts under
 * ITEM_TEXT_MIN clean chars */
static void keep_item(stat_t *s, size_t i) {
    for (;;) {
        s[i].keep = KEEP_ITEM;
        long title = title_child(s, i);
        if (title < 0 || is_link_exempt_tag(s[title].tag)) {
            if (title >= 0) s[title].keep = KEEP_ITEM;
            return;
        }
        for (size_t j = i + 1, end = i + s[i].size; j < end; j += s[j].size)
            if ((long) j != title && s[j].chars && s[j].clean < ITEM_TEXT_MIN && !s[j].boiler
                && !is_link_exempt_tag(s[j].tag))  /* an inline element beside the title is of its line */
                s[j].boiler = ITEM_META;
        i = (size_t) title;
    }
}

/* a block a tag or class word marks (a sidebar's widget, a footer): no listing in there; an inline
 * moderation <form> around a topic list (vBulletin, Simple Machines) is none; an <article>: its lists are its own */
static inline int in_marked(const stat_t *s, size_t i) {
    return ((s[i].boiler == BY_TAG || s[i].boiler == BY_WORD) && s[i].tag != LXB_TAG_FORM) || s[i].tag == LXB_TAG_ARTICLE;
}

/* listing.find: the lists of items of a page that may be a listing (into lists, none inside another;
 * how many, -1: no memory) */
static long listing_find(const stats_t *st, size_t **lists) {
    const stat_t *s = st->s;
    long big = -1;
    for (size_t i = 0; i < st->n; i++) {
        if (in_marked(s, i)) { i += s[i].size - 1; continue; }
        if (s[i].size > LIST_N && is_item_list(s, i) && (big < 0 || s[i].chars > s[big].chars)) big = (long) i;
    }
    if (big < 0) return 0;
    uint64_t outside = st->rtotal - s[big].rawpar;  /* paragraph text outside the list: an article, a side box */
    if ((uint64_t) s[big].chars * LISTING_DEN < st->total
        || (outside >= ROOT_MIN && outside * LISTING_DEN >= s[big].rawpar))
        return 0;
    size_t m = 0, cap = 0, *out = NULL;
    for (size_t i = 0; i < st->n; i++) {
        if (in_marked(s, i)) { i += s[i].size - 1; continue; }
        if (!(s[i].size > LIST_N && is_item_list(s, i))) continue;
        if ((uint64_t) s[i].chars * 3 < s[big].chars || (m && i < out[m - 1] + s[out[m - 1]].size)) continue;
        if (grow((void **) &out, &cap, m + 1, sizeof(size_t)) < 0) { free(out); return -1; }
        out[m++] = i;
    }
    *lists = out;
    return (long) m;
}

static int keep_nested(stat_t *s, size_t i);

/* listing._keep_list: keep list i, its items and the chains down to the titles, and the lists of
 * items inside its items; ITEM_META the lists' short rows not led by a link */
static void keep_list(stat_t *s, size_t i) {
    s[i].keep = KEEP_LIST;
    for (size_t j = i + 1, end = i + s[i].size; j < end; j += s[j].size) {
        if (s[j].chars && s[j].lead) { keep_item(s, j); keep_nested(s, j); }
        else if (s[j].chars && s[j].clean < ITEM_TEXT_MIN && !s[j].boiler)
            s[j].boiler = ITEM_META;  /* a header row: "Topic Replies Views" */
    }
}

/* listing._nested: keep the lists of items inside element i and the elements down to them (a forum
 * index: categories, each a list of forums); whether there was one */
static int keep_nested(stat_t *s, size_t i) {
    int found = 0;
    for (size_t j = i + 1, end = i + s[i].size; j < end; j += s[j].size) {
        if (in_marked(s, j)) continue;
        if (s[j].size > LIST_N && is_item_list(s, j)) { keep_list(s, j); found = 1; }
        else if (s[j].size > 1 && keep_nested(s, j)) {
            if (!s[j].keep) s[j].keep = KEEP_ITEM;
            found = 1;
        }
    }
    return found;
}

/* listing.keep: keep the lists, their items and the chains down to the titles, and the lists inside
 * the items; ITEM_META the items' meta parts and the lists' short rows not led by a link */
static void listing_keep(stat_t *s, const size_t *lists, size_t m) {
    for (size_t k = 0; k < m; k++) keep_list(s, lists[k]);
}

/* roots.with_lists: the content roots of a page with lists of items (listing_find), marked again in st
 * (whether rooted), and in *m the lists that make it a listing (0: none). A root holding more clean
 * text outside the lists than they hold chars: no listing. Else the lists and the roots that hold a
 * list or clean text of 1/LISTING_DEN of the lists' chars; rooted 0 (the body): the lists when the
 * clean text outside them is under ROOT_MIN and 1/LISTING_DEN of their chars, else the body */
static int with_lists(stats_t *st, int rooted, const size_t *lists, size_t *m_out) {
    size_t m = *m_out;
    if (!m) return rooted;
    stat_t *s = st->s;
    uint64_t chars = 0, clean = 0;
    for (size_t k = 0; k < m; k++) { chars += s[lists[k]].chars; clean += s[lists[k]].clean; }
    if (!rooted) {
        uint64_t outside = clean < st->ctotal ? st->ctotal - clean : 0;
        if (outside >= ROOT_MIN || outside * LISTING_DEN >= chars) return 0;
        for (size_t k = 0; k < m; k++) { s[lists[k]].root = ROOT_IN; mark_above(st, lists[k]); }
        return 1;
    }
    for (size_t r = 0; r < st->n; r++) {  /* a root outweighs the lists: no listing */
        if (s[r].root != ROOT_IN) continue;
        int64_t own = s[r].clean;
        for (size_t k = 0; k < m; k++) if (r < lists[k] && lists[k] < r + s[r].size) own -= s[lists[k]].clean;
        if (own >= (int64_t) chars) { *m_out = 0; return 1; }
    }
    for (size_t r = 0; r < st->n; r++) {
        if (s[r].root != ROOT_IN) continue;
        int holds = 0, inside = 0;
        for (size_t k = 0; k < m; k++) {
            if (r < lists[k] && lists[k] < r + s[r].size) holds = 1;
            if (lists[k] <= r && r < lists[k] + s[lists[k]].size) inside = 1;
        }
        if (!holds && (inside || (uint64_t) s[r].clean * LISTING_DEN < chars)) s[r].root = ROOT_OUT;
    }
    for (size_t k = 0; k < m; k++) s[lists[k]].root = ROOT_IN;
    for (size_t r = 0; r < st->n; r++)  /* a list inside a kept root is written with it */
        if (s[r].root == ROOT_IN)
            for (size_t k = 0; k < m; k++)
                if (r < lists[k] && lists[k] < r + s[r].size) s[lists[k]].root = ROOT_ABOVE;
    for (size_t r = 0; r < st->n; r++) if (s[r].root == ROOT_ABOVE) s[r].root = ROOT_OUT;
    for (size_t r = 0; r < st->n; r++) if (s[r].root == ROOT_IN) mark_above(st, r);
    return 1;
}

/* ------------------------------------------------------------------ main_html (lib/html/mainhtml.py) */
/* The main content with structural tags only, written in the walk that writes the text: the
 * same calls in the same order as lib/html/mainhtml.HtmlWriter gets, the same bytes out. */
/* html_kind, html_name, html_context: lexwalk_rules.h (lib.html.rules.HTML_TAGS, HTML_CONTEXT) */

typedef struct { uintptr_t tag; size_t off, len; int kind; } hopen_t;  /* kind H_DROP: no tag written */

typedef struct {
    buf_t out, marks, ws;  /* marks: the open tags of the stack's entries; ws: whitespace pending */
    hopen_t *stack;
    size_t depth, cap, written;  /* the stack's first `written` open tags are written */
    int content, pre, error;  /* error: the resolver raised */
    size_t breaks;
    PyObject *resolver;
    const char *origin;
    Py_ssize_t origin_len;
} html_t;

static void esc_put(buf_t *b, const unsigned char *p, size_t n, int attr) {
    const unsigned char *start = p, *end = p + n;
    for (; p < end; p++) {
        const char *e = NULL;
        switch (*p) {
        case '&': e = "&amp;"; break;
        case '<': e = "&lt;"; break;
        case '>': e = "&gt;"; break;
        case '"': e = attr ? "&quot;" : NULL; break;
        case '\'': e = attr ? "&#x27;" : NULL; break;
        }
        if (e == NULL) continue;
        buf_put(b, (const char *) start, (size_t) (p - start));
        buf_put(b, e, strlen(e));
        start = p + 1;
    }
    buf_put(b, (const char *) start, (size_t) (end - start));
}

static PyObject *resolve_fast(const lexbor_str_t *v, const char *origin, Py_ssize_t origin_len);
static PyObject *str_of(const lexbor_str_t *v);

/* the absolute URL of an <a>'s href as a new str, or NULL (no link, or an error: h->error) */
static PyObject *h_url(html_t *h, const lxb_dom_element_t *el) {
    if (!has_attr_id(el, LXB_DOM_ATTR_HREF)) return NULL;
    int present;
    const lexbor_str_t *v = attr_value(el, LXB_DOM_ATTR_HREF, &present);
    PyObject *url = resolve_fast(present ? v : NULL, h->origin, h->origin_len);
    if (url == NULL && !PyErr_Occurred()) {  /* LinkResolver decides */
        PyObject *href = str_of(present ? v : NULL);
        url = href != NULL ? PyObject_CallOneArg(h->resolver, href) : NULL;
        Py_XDECREF(href);
    }
    if (url == NULL) { h->error = 1; return NULL; }
    if (!PyUnicode_Check(url) || PyUnicode_GET_LENGTH(url) == 0) { Py_DECREF(url); return NULL; }
    return url;
}

static void h_entry(html_t *h, uintptr_t tag, int kind, const char *markup, size_t len) {
    if (grow((void **) &h->stack, &h->cap, h->depth + 1, sizeof(hopen_t)) < 0) { h->out.failed = 1; return; }
    hopen_t *e = &h->stack[h->depth++];
    *e = (hopen_t) {tag, h->marks.len, len, kind};
    buf_put(&h->marks, markup, len);
}

static void h_tag(html_t *h, uintptr_t tag) {
    char markup[16];
    int len = snprintf(markup, sizeof markup, "<%s>", html_name(tag));
    h_entry(h, tag, html_kind(tag), markup, (size_t) len);
}

/* HtmlWriter.push: an element kept by the walk is entered (root: the content root) */
static void h_push(html_t *h, const lxb_dom_element_t *el, uintptr_t tag, int root) {
    if (root) {  /* rules.HTML_CONTEXT */
        uintptr_t outer[2];
        int k = html_context(tag, outer);
        for (int j = 0; j < k; j++) h_tag(h, outer[j]);
    }
    int kind = html_kind(tag);
    if (kind == H_DROP || (tag == LXB_TAG_A && h->error)) { h_entry(h, tag, H_DROP, "", 0); return; }
    if (tag != LXB_TAG_A) { h->pre += tag == LXB_TAG_PRE; h_tag(h, tag); return; }
    PyObject *url = h_url(h, el);
    Py_ssize_t n;
    const char *u = url != NULL ? PyUnicode_AsUTF8AndSize(url, &n) : NULL;
    if (u == NULL) {  /* no link, or one without a UTF-8 form (a lone surrogate): its text alone */
        if (url != NULL) PyErr_Clear();
        Py_XDECREF(url);
        h_entry(h, tag, H_DROP, "", 0);
        return;
    }
    buf_t m = {0};
    buf_put(&m, "<a href=\"", 9);
    esc_put(&m, (const unsigned char *) u, (size_t) n, 1);
    buf_put(&m, "\">", 2);
    Py_DECREF(url);
    if (m.failed) h->out.failed = 1;
    else h_entry(h, tag, H_INLINE, m.data, m.len);
    free(m.data);
}

/* HtmlWriter.pop: the innermost element entered is left */
static void h_pop(html_t *h);

/* a content root left: the context h_push gave it (rules.HTML_CONTEXT) is left too */
static void h_unroot(html_t *h, uintptr_t tag) {
    uintptr_t outer[2];
    int k = html_context(tag, outer);
    while (k-- > 0 && h->depth) h_pop(h);
}

static void h_pop(html_t *h) {
    hopen_t e = h->stack[--h->depth];
    int written = h->depth < h->written;
    if (written) h->written--;
    h->marks.len = e.off;
    if (e.kind == H_DROP) return;
    h->pre -= e.tag == LXB_TAG_PRE;
    if (!written) return;
    buf_put(&h->out, "</", 2);
    buf_put(&h->out, html_name(e.tag), strlen(html_name(e.tag)));
    buf_byte(&h->out, '>');
    if (e.kind == H_BLOCK) { h->content = 0; h->breaks = 0; h->ws.len = 0; }
    else if (e.kind == H_CELL) h->ws.len = 0;
}

static inline void h_brk(html_t *h) {
    if (h->content || h->breaks) h->breaks++;
    h->content = 0;
    h->ws.len = 0;
}

static inline void h_space(html_t *h) { buf_byte(&h->ws, ' '); }

/* HtmlWriter._separate: the break or space pending before text, inside <pre> as it is */
static void h_separate(html_t *h) {
    if (h->pre) {
        for (size_t k = 0; k < h->breaks; k++) buf_byte(&h->out, '\n');
        buf_put(&h->out, h->ws.data, h->ws.len);
    }
    else if (h->breaks) buf_put(&h->out, "<br>", 4);
    else if (h->ws.len && h->content) buf_byte(&h->out, ' ');
    h->breaks = 0;
    h->ws.len = 0;
}

/* HtmlWriter._content: the open tags not yet written, then the text */
static void h_content(html_t *h, const unsigned char *p, size_t n) {
    int structural = 0;
    for (size_t k = h->written; k < h->depth; k++)
        if (h->stack[k].kind == H_BLOCK || h->stack[k].kind == H_CELL) structural = 1;
    if (!structural) h_separate(h);
    for (size_t k = h->written; k < h->depth; k++) {
        const hopen_t *e = &h->stack[k];
        if (e->kind == H_DROP) continue;
        if (e->kind == H_BLOCK) { h->breaks = 0; h->ws.len = 0; }
        else if (e->kind == H_CELL) h->ws.len = 0;
        buf_put(&h->out, h->marks.data + e->off, e->len);
    }
    h->written = h->depth;
    if (structural) h_separate(h);
    h->content = 1;
    esc_put(&h->out, p, n, 0);
}

/* HtmlWriter.text: a text node; breaks: the characters that break the line */
static void h_text(html_t *h, const unsigned char *p, size_t n, int breaks) {
    const unsigned char *end = p + n;
    while (p < end) {
        if (is_break(*p, breaks)) { h_brk(h); p++; continue; }
        int k = ws_len(p, end);
        if (k) { buf_byte(&h->ws, k == 1 && (*p == ' ' || *p == '\t') ? (char) *p : ' '); p += k; continue; }
        const unsigned char *start = p;
        do { p++; } while (p < end && !is_break(*p, breaks) && !ws_len(p, end));
        h_content(h, start, (size_t) (p - start));
    }
}

/* HtmlWriter.finish: every element written closed */
static void h_finish(html_t *h) {
    while (h->depth) h_pop(h);
}

static void h_clear(html_t *h) {
    free(h->out.data);
    free(h->marks.data);
    free(h->ws.data);
    free(h->stack);
    PyObject *resolver = h->resolver;
    const char *origin = h->origin;
    Py_ssize_t origin_len = h->origin_len;
    *h = (html_t) {0};
    h->resolver = resolver;
    h->origin = origin;
    h->origin_len = origin_len;
}

/* the boundary an element's start or end makes: a line for a block, a space for a cell */
static inline void enter(writer_t *w, html_t *h, uintptr_t tag) {
    if (is_block_tag(tag)) { w_break(w); if (h) h_brk(h); }
    else if (is_cell_tag(tag)) { w_space(w); if (h) h_space(h); }
}

/* maintext.main_text: the text of the content roots (with rooted 0: the body's), what no rule
 * drops */
enum { STRICT, LENIENT, BARE };

static void text_walk(writer_t *w, html_t *h, const lxb_dom_node_t *body, const stats_t *st, int rooted, int level) {
    size_t i = 0;
    int inside = !rooted, pre = 0;  /* pre: <pre> elements entered, whose line breaks are the text's */
    const lxb_dom_node_t *root_node = NULL;  /* the content root entered: its end ends the writing until the next */
    const lxb_dom_node_t *n = body->first_child;
    while (n != NULL) {
        int descend = 0, rule;
        if (n->local_name == LXB_TAG__TEXT) {
            const lexbor_str_t *s = &((const lxb_dom_character_data_t *) n)->data;
            if (inside && s->data != NULL) {
                w_text(w, s->data, s->length, pre ? PRE_BREAKS : SEP_BREAKS);
                if (h) h_text(h, s->data, s->length, pre ? PRE_BREAKS : SEP_BREAKS);
            }
        }
        else if (is_element(n)) {
            const lxb_dom_element_t *el = (const lxb_dom_element_t *) n;
            uintptr_t tag = n->local_name;
            const stat_t *s = &st->s[i];
            if (is_invisible(el, tag)) i += s->size;
            else if (!inside) {
                if (s->root == ROOT_IN) {
                    descend = n->first_child != NULL;
                    if (descend) {
                        inside = 1;
                        root_node = n;
                        enter(w, h, tag);
                        if (h) h_push(h, el, tag, 1);
                    }
                    i++;
                }
                else if (s->root == ROOT_ABOVE) { descend = 1; i++; }
                else i += s->size;
            }
            else if (level != BARE && !is_protected_tag(tag)
                     && ((rule = is_boilerplate(el, tag, s->own, level == STRICT ? s->ownlinks : 0, s->rawpar)) != NO_RULE
                         || (level == STRICT && (rule = is_residue(tag, s)) != NO_RULE))
                     && !is_protected(s, rule, st))
                i += s->size;
            else {
                i++;
                enter(w, h, tag);
                descend = n->first_child != NULL;
                if (descend && h) h_push(h, el, tag, 0);
            }
        }
        if (descend) { pre += n->local_name == LXB_TAG_PRE; n = n->first_child; continue; }
        while (n->next == NULL) {
            n = n->parent;
            if (n == NULL || n == body) return;
            pre -= n->local_name == LXB_TAG_PRE;
            if (inside) {  /* a block's end ends its line too */
                enter(w, h, n->local_name);
                if (h) h_pop(h);
                if (n == root_node) {  /* a content root ends */
                    inside = 0;
                    w_break(w);
                    if (h) { h_brk(h); h_unroot(h, n->local_name); }
                }
            }
        }
        n = n->next;
    }
}

static PyObject *finish(buf_t *b) {
    if (b->failed) { free(b->data); return PyErr_NoMemory(); }
    PyObject *s = PyUnicode_DecodeUTF8(b->data ? b->data : "", (Py_ssize_t) b->len, "replace");
    free(b->data);
    return s;
}

static PyObject *py_main_text(PyObject *self, PyObject *args) {
    (void) self;
    PyObject *addr, *resolver = Py_None, *origin = Py_None;
    if (!PyArg_ParseTuple(args, "O|OO", &addr, &resolver, &origin)) return NULL;
    const lxb_dom_node_t *body = (const lxb_dom_node_t *) PyLong_AsVoidPtr(addr);
    int with_html = resolver != Py_None;
    if (body == NULL) {
        if (PyErr_Occurred()) return NULL;
        return with_html ? Py_BuildValue("(sis)", "", 0, "") : Py_BuildValue("(si)", "", 0);
    }
    html_t html = {0}, *h = with_html ? &html : NULL;
    if (h) {
        h->resolver = resolver;
        if (origin != Py_None && (h->origin = PyUnicode_AsUTF8AndSize(origin, &h->origin_len)) == NULL)
            PyErr_Clear();  /* not UTF-8 (surrogates): the Python resolver joins */
    }
    stats_t st = {0};
    if (measure(&st, body) < 0) { free(st.s); return PyErr_NoMemory(); }
    headed(&st);
    unprotect(&st);
    if (trailing(&st) < 0) { free(st.s); return PyErr_NoMemory(); }
    size_t *lists = NULL;
    long found = listing_find(&st, &lists);
    if (found < 0) { free(st.s); return PyErr_NoMemory(); }
    size_t m = (size_t) found;
    int rooted = with_lists(&st, content_roots(&st), lists, &m);
    listing_keep(st.s, lists, m);
    free(lists);
    writer_t w = {.shy = 1};
    text_walk(&w, h, body, &st, rooted, STRICT);
    /* nothing left of a body with text: fewer rules (maintext.main_text) */
    for (int level = LENIENT; level <= BARE && w.out.len == 0 && !w.out.failed && st.total; level++) {
        if (h && h->error) break;
        if (h) h_clear(h);
        text_walk(&w, h, body, &st, 0, level);
    }
    unsigned long long total = st.total;
    free(st.s);
    PyObject *text = NULL, *out = NULL;
    if (h && !h->error) h_finish(h);
    if (h && h->error) { free(w.out.data); h_clear(h); return NULL; }
    if (h && (h->out.failed || h->marks.failed || h->ws.failed)) w.out.failed = 1;
    text = finish(&w.out);
    if (text == NULL) { if (h) h_clear(h); return NULL; }
    if (!h) return Py_BuildValue("(NK)", text, total);
    out = finish(&h->out);
    h->out = (buf_t) {0};
    h_clear(h);
    if (out == NULL) { Py_DECREF(text); return NULL; }
    return Py_BuildValue("(NKN)", text, total, out);
}

/* ------------------------------------------------------------------ links */
/* the words of every text node under root, text nodes apart: " ".join(a.text(separator=" ").split()) */
static void anchor_walk(writer_t *w, const lxb_dom_node_t *root) {
    for (const lxb_dom_node_t *n = root->first_child; n != NULL; n = next_node(n, root, 1)) {
        if (n->local_name == LXB_TAG__TEXT) {
            const lexbor_str_t *s = &((const lxb_dom_character_data_t *) n)->data;
            if (s->data != NULL) { w_space(w); w_text(w, s->data, s->length, 0); w_space(w); }
        }
    }
}

/* a.css_first("img[alt]"): the first <img> under root with an alt attribute */
static const lxb_dom_element_t *first_img_alt(const lxb_dom_node_t *root) {
    for (const lxb_dom_node_t *n = root->first_child; n != NULL; n = next_node(n, root, 1)) {
        if (is_element(n) && n->local_name == LXB_TAG_IMG && has_attr_id((const lxb_dom_element_t *) n, LXB_DOM_ATTR_ALT))
            return (const lxb_dom_element_t *) n;
    }
    return NULL;
}

static PyObject *str_of(const lexbor_str_t *v) {
    if (v == NULL || v->data == NULL) return PyUnicode_FromString("");
    return PyUnicode_DecodeUTF8((const char *) v->data, (Py_ssize_t) v->length, "replace");
}

/* ------------------------------------------------------------------ the resolver's fast paths */
static int has_sub(const unsigned char *p, size_t n, const char *sub) {
    return memmem(p, n, sub, strlen(sub)) != NULL;
}

static int has_any(const unsigned char *p, size_t n, const char *bytes) {
    for (size_t i = 0; i < n; i++)
        if (strchr(bytes, p[i]) != NULL && p[i] != 0) return 1;
    return 0;
}

static int prefix_ci(const unsigned char *p, size_t n, const char *pre) {
    size_t k = strlen(pre);
    if (n < k) return 0;
    for (size_t i = 0; i < k; i++) {
        unsigned char c = p[i];
        if ((c >= 'A' && c <= 'Z' ? c + 32 : c) != (unsigned char) pre[i]) return 0;
    }
    return 1;
}

/* What extract.LinkResolver(base)(href) returns, where that needs no urljoin: a new str (the
 * URL), Py_False (no link), or NULL without an exception (ask the Python resolver). The same
 * tests in the same order: href.strip(); empty or '#...': no link; a root-relative path
 * without '//', '/.', ';', '\\', tab, CR, LF and not ending in '?': origin + path; an
 * http(s) URL without '\\', '/.' or '[': itself up to '#', if anything follows the scheme. */
static PyObject *resolve_fast(const lexbor_str_t *v, const char *origin, Py_ssize_t origin_len) {
    const unsigned char *p = v != NULL && v->data != NULL ? v->data : (const unsigned char *) "";
    const unsigned char *end = p + (v != NULL && v->data != NULL ? v->length : 0), *last = p;
    int k;
    while (p < end && (k = ws_len(p, end)) > 0) p += k;  /* str.strip(): Unicode whitespace */
    for (const unsigned char *q = p; q < end;) {
        k = ws_len(q, end);
        if (k) { q += k; continue; }
        last = ++q;
    }
    size_t n = last > p ? (size_t) (last - p) : 0;
    if (n == 0 || p[0] == '#') Py_RETURN_FALSE;
    const unsigned char *hash = memchr(p, '#', n);
    size_t path = hash != NULL ? (size_t) (hash - p) : n;  /* href up to the fragment */
    if (p[0] == '/' && origin != NULL && p[path - 1] != '?' && !has_sub(p, path, "//") && !has_sub(p, path, "/.")
        && !has_any(p, path, ";\\\t\n\r")) {
        buf_t b = {0};
        buf_put(&b, origin, (size_t) origin_len);
        buf_put(&b, (const char *) p, path);
        return finish(&b);
    }
    int scheme = prefix_ci(p, n, "http://") ? 7 : prefix_ci(p, n, "https://") ? 8 : 0;
    if (scheme && !has_any(p, n, "\\[") && !has_sub(p, n, "/.")) {
        if (path <= (size_t) scheme) Py_RETURN_FALSE;
        return PyUnicode_DecodeUTF8((const char *) p, (Py_ssize_t) path, "replace");
    }
    return NULL;
}

/* ------------------------------------------------------------------ links */
/* the embed columns, lib.html.embeds.COLUMNS's order */
enum { EMB_IMAGE, EMB_VIDEO, EMB_IFRAME, EMB_SCRIPT, EMB_STYLESHEET, EMB_N };

typedef struct {
    PyObject *out;
    const char *origin;
    Py_ssize_t origin_len;
    PyObject *resolver;       /* the page's LinkResolver: embeds are collected; NULL: not */
    Py_ssize_t max_each;      /* entries kept per embed column (embeds.MAX_EACH) */
    PyObject *emb[EMB_N];     /* each column's entries, document order */
    PyObject *seen[EMB_N];    /* each column's URLs so far: a URL once */
} links_t;

static int add_link(links_t *ctx, const lxb_dom_element_t *a) {
    int present;
    const lexbor_str_t *v = attr_value(a, LXB_DOM_ATTR_HREF, &present);
    PyObject *href = Py_None, *target = resolve_fast(present ? v : NULL, ctx->origin, ctx->origin_len);
    if (target == NULL) {  /* the Python resolver decides: it needs the href */
        if (PyErr_Occurred()) return -1;
        if ((href = str_of(v)) == NULL) return -1;
        target = Py_None;
        Py_INCREF(target);
    }
    else if (target == Py_False) {  /* no link: not listed */
        Py_DECREF(target);
        return 0;
    }
    else Py_INCREF(href);
    writer_t w = {0};
    anchor_walk(&w, &a->node);
    if (w.out.len == 0 && !w.out.failed) {  /* no text: the alt of the first img[alt] */
        const lxb_dom_element_t *img = first_img_alt(&a->node);
        if (img != NULL) {
            const lexbor_str_t *alt = attr_value(img, LXB_DOM_ATTR_ALT, &present);
            if (alt != NULL && alt->data != NULL) w_text(&w, alt->data, alt->length, 0);
        }
    }
    PyObject *anchor = finish(&w.out), *item = NULL, *rel = Py_None;
    const lexbor_str_t *rv = attr_value(a, LXB_DOM_ATTR_REL, &present);
    if (present && rv != NULL && rv->data != NULL && rv->length > 0) rel = str_of(rv);  /* new reference */
    else Py_INCREF(rel);
    if (anchor != NULL && rel != NULL) item = PyTuple_Pack(4, href, anchor, target, rel);
    Py_DECREF(href);
    Py_XDECREF(anchor);
    Py_XDECREF(rel);
    Py_DECREF(target);
    if (item == NULL) return -1;
    int rc = PyList_Append(ctx->out, item);
    Py_DECREF(item);
    return rc;
}

/* ------------------------------------------------------------------ discussion markup */
/* What lib.html.discussion's selectors (ENGINES, MICRODATA) need on some element of the page, in
 * any case (lexbor matches class names and ids in any case in quirks mode): a class token, an id,
 * an attribute's value (for the microdata selectors, the ancestor's itemtype: itemprop=articleBody
 * is on every news article that marks itself up). A superset: a page with none of these matches none of the selectors, so
 * content._posts asks lexbor's selector engine (a pass over the tree per selector) only on pages
 * with one. tests/html/test_main_text_kinds.py checks the superset on real pages. */
static const char *const POST_CLASSES[] = {
    "s-prose", "post-text", "crawler-post", "cooked", "bbwrapper", "messagetext", "postbody", "postcontent", "bbp-topic-content",
    "bbp-reply-content", "windowbg", "windowbg2", "post_body", "message", "postmsg", "post-body", "richtextjson-root",
    NULL};

static inline int eq_ci(const unsigned char *p, size_t n, const char *s) { return n == strlen(s) && prefix_ci(p, n, s); }

static inline int suffix_ci(const unsigned char *p, size_t n, const char *s) {
    size_t k = strlen(s);
    return n >= k && prefix_ci(p + n - k, k, s);
}

static inline int ascii_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

/* a token of p[0:n] (split at ASCII whitespace, as class selectors split) is one of list, in any case */
static int token_in(const unsigned char *p, size_t n, const char *const *list) {
    const unsigned char *end = p + n;
    while (p < end) {
        if (ascii_ws(*p)) { p++; continue; }
        const unsigned char *start = p;
        while (p < end && !ascii_ws(*p)) p++;
        for (const char *const *w = list; *w != NULL; w++)
            if (eq_ci(start, (size_t) (p - start), *w)) return 1;
    }
    return 0;
}

static int post_markup(const lxb_dom_element_t *el) {
    for (const lxb_dom_attr_t *a = el->first_attr; a != NULL; a = a->next) {
        const lexbor_str_t *v = a->value;
        const unsigned char *p = v != NULL && v->data != NULL ? v->data : (const unsigned char *) "";
        size_t n = v != NULL && v->data != NULL ? v->length : 0;
        if (a->node.local_name == LXB_DOM_ATTR_CLASS) {
            if (token_in(p, n, POST_CLASSES)) return 1;
        }
        else if (a->node.local_name == LXB_DOM_ATTR_ID) {
            if (prefix_ci(p, n, "post_message_") || eq_ci(p, n, "forumposts")) return 1;
        }
        else if (attr_named(a, "itemtype", 8) ? suffix_ci(p, n, "schema.org/question") || suffix_ci(p, n, "schema.org/answer")
                                                     || suffix_ci(p, n, "schema.org/discussionforumposting")
                 : attr_named(a, "data-role", 9) ? eq_ci(p, n, "commentcontent")
                 : attr_named(a, "data-test-id", 12) ? eq_ci(p, n, "comment") || eq_ci(p, n, "post-content")
                 : attr_named(a, "component", 9) && eq_ci(p, n, "post/content"))
            return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ embedded resources */
/* lib.html.embeds.embeds in this walk: what its one CSS query (SELECTOR) matches, in the same
 * document order, each URL resolved as the links are (resolve_fast, else the page's resolver),
 * kept once per column and at most max_each. The Python function stays the reference
 * (tests/html/test_native_walk.py holds the two equal). */

/* selectolax's attributes[name]: None without a value (``<img width>``), else the value */
static PyObject *attr_or_none(const lxb_dom_element_t *el, uintptr_t id) {
    int present;
    const lexbor_str_t *v = attr_value(el, id, &present);
    if (!present || v == NULL || v->data == NULL) Py_RETURN_NONE;
    return str_of(v);
}

/* "stylesheet" is one of the tokens of rel.lower().split(): an occurrence in any case (no non-ASCII
 * character lowers to one of its letters) with Unicode whitespace or an end on either side */
static int rel_stylesheet(const lexbor_str_t *v) {
    if (v == NULL || v->data == NULL) return 0;
    const unsigned char *p = v->data, *end = p + v->length;
    for (size_t i = 0; i + 10 <= v->length; i++) {
        if (!prefix_ci(p + i, 10, "stylesheet")) continue;
        int before = i == 0 || ws_len(p + i - 1, end) == 1 || (i >= 2 && ws_len(p + i - 2, end) == 2)
                     || (i >= 3 && ws_len(p + i - 3, end) == 3);
        if (before && (i + 10 == v->length || ws_len(p + i + 10, end) > 0)) return 1;
    }
    return 0;
}

/* one matched element: its URL attribute ``id`` resolved into column col; ``sized`` (or NULL) the
 * element whose width and height go beside it */
static int add_embed(links_t *ctx, int col, const lxb_dom_element_t *el, uintptr_t id, const lxb_dom_element_t *sized) {
    int present;
    const lexbor_str_t *v = attr_value(el, id, &present);
    if (!present || v == NULL || v->data == NULL || v->length == 0) return 0;  /* no src: nothing */
    if (PyList_GET_SIZE(ctx->emb[col]) >= ctx->max_each) return 0;
    PyObject *url = resolve_fast(v, ctx->origin, ctx->origin_len);
    if (url == NULL) {  /* the resolver decides (urljoin) */
        if (PyErr_Occurred()) return -1;
        PyObject *href = str_of(v);
        if (href == NULL) return -1;
        url = PyObject_CallOneArg(ctx->resolver, href);
        Py_DECREF(href);
        if (url == NULL) return -1;
    }
    if (url == Py_False || url == Py_None) { Py_DECREF(url); return 0; }
    int seen = PySet_Contains(ctx->seen[col], url);
    if (seen != 0 || PySet_Add(ctx->seen[col], url) < 0) { Py_DECREF(url); return seen > 0 ? 0 : -1; }
    PyObject *item = url;
    if (sized != NULL) {
        PyObject *w = attr_or_none(sized, LXB_DOM_ATTR_WIDTH), *h = attr_or_none(sized, LXB_DOM_ATTR_HEIGHT);
        item = w != NULL && h != NULL ? Py_BuildValue("{sOsOsO}", "src", url, "width", w, "height", h) : NULL;
        Py_XDECREF(w);
        Py_XDECREF(h);
        Py_DECREF(url);
        if (item == NULL) return -1;
    }
    int rc = PyList_Append(ctx->emb[col], item);
    Py_DECREF(item);
    return rc;
}

/* the embeds of element n (tag), if it is one SELECTOR matches */
static int embed_of(links_t *ctx, const lxb_dom_node_t *n, uintptr_t tag) {
    const lxb_dom_element_t *el = (const lxb_dom_element_t *) n;
    int present;
    switch (tag) {
        case LXB_TAG_IMG: return add_embed(ctx, EMB_IMAGE, el, LXB_DOM_ATTR_SRC, el);
        case LXB_TAG_VIDEO: return add_embed(ctx, EMB_VIDEO, el, LXB_DOM_ATTR_SRC, el);
        case LXB_TAG_IFRAME: return add_embed(ctx, EMB_IFRAME, el, LXB_DOM_ATTR_SRC, el);
        case LXB_TAG_SCRIPT: return add_embed(ctx, EMB_SCRIPT, el, LXB_DOM_ATTR_SRC, NULL);
        case LXB_TAG_SOURCE:  /* "video source[src]": the nearest <video> above it, and its size */
            for (const lxb_dom_node_t *p = n->parent; p != NULL; p = p->parent)
                if (is_element(p) && p->local_name == LXB_TAG_VIDEO)
                    return add_embed(ctx, EMB_VIDEO, el, LXB_DOM_ATTR_SRC, (const lxb_dom_element_t *) p);
            return 0;
        case LXB_TAG_LINK: {  /* "link[rel][href]" whose rel says stylesheet */
            const lexbor_str_t *rel = attr_value(el, LXB_DOM_ATTR_REL, &present);
            if (!present || !rel_stylesheet(rel)) return 0;
            return add_embed(ctx, EMB_STYLESHEET, el, LXB_DOM_ATTR_HREF, NULL);
        }
        default: return 0;
    }
}

/* every a[href] from root on in document order (root included, as css() does), and in *strays
 * which of <title>, <meta>, <base> and <link> occur outside head (all, head NULL), as bits 1, 2, 4, 8
 * (and bit 16: some element has discussion markup, post_markup):
 * where a field that <head> lacks may still be found, so content._fields_and_links asks lexbor's
 * selector engine for it over the whole document only then. The query visits every node, as
 * this walk does: a tenth of a heavy page's cost, saved on most pages. */
static int links_walk(links_t *ctx, const lxb_dom_node_t *root, const lxb_dom_node_t *head, long *strays) {
    const lxb_dom_node_t *after_head = head != NULL ? next_node(head, root, 0) : NULL;
    int in_head = 0;
    for (const lxb_dom_node_t *n = root; n != NULL; n = next_node(n, root, 1)) {
        if (n == head) in_head = 1;
        else if (n == after_head) in_head = 0;
        if (!is_element(n)) continue;
        if (!(*strays & 16) && post_markup((const lxb_dom_element_t *) n)) *strays |= 16;
        switch (n->local_name) {
            case LXB_TAG_A:
                if (has_attr_id((const lxb_dom_element_t *) n, LXB_DOM_ATTR_HREF) && add_link(ctx, (const lxb_dom_element_t *) n) < 0)
                    return -1;
                break;
            case LXB_TAG_TITLE: if (!in_head) *strays |= 1; break;
            case LXB_TAG_META: if (!in_head) *strays |= 2; break;
            case LXB_TAG_BASE: if (!in_head) *strays |= 4; break;
            case LXB_TAG_LINK: if (!in_head) *strays |= 8; break;
            default: break;
        }
        if (ctx->resolver != NULL && embed_of(ctx, n, n->local_name) < 0) return -1;
    }
    return 0;
}

static void links_clear(links_t *ctx) {
    Py_XDECREF(ctx->out);
    for (int i = 0; i < EMB_N; i++) { Py_XDECREF(ctx->emb[i]); Py_XDECREF(ctx->seen[i]); }
}

static PyObject *py_links(PyObject *self, PyObject *args) {
    (void) self;
    PyObject *addr, *origin, *haddr = NULL, *resolver = NULL;
    Py_ssize_t max_each = 0;
    if (!PyArg_ParseTuple(args, "OO|OOn", &addr, &origin, &haddr, &resolver, &max_each)) return NULL;
    const lxb_dom_node_t *root = (const lxb_dom_node_t *) PyLong_AsVoidPtr(addr);
    if (root == NULL && PyErr_Occurred()) return NULL;
    const lxb_dom_node_t *head = NULL;
    if (haddr != NULL && haddr != Py_None) {
        head = (const lxb_dom_node_t *) PyLong_AsVoidPtr(haddr);
        if (head == NULL && PyErr_Occurred()) return NULL;
    }
    links_t ctx = {PyList_New(0), NULL, 0, resolver != Py_None ? resolver : NULL, max_each, {0}, {0}};
    long strays = 0;
    if (ctx.out == NULL) return NULL;
    for (int i = 0; ctx.resolver != NULL && i < EMB_N; i++) {
        if ((ctx.emb[i] = PyList_New(0)) == NULL || (ctx.seen[i] = PySet_New(NULL)) == NULL) { links_clear(&ctx); return NULL; }
    }
    if (root != NULL) {
        if (origin != Py_None) {
            ctx.origin = PyUnicode_AsUTF8AndSize(origin, &ctx.origin_len);
            if (ctx.origin == NULL) PyErr_Clear();  /* not UTF-8 (surrogates): the Python resolver joins */
        }
        if (links_walk(&ctx, root, head, &strays) < 0) { links_clear(&ctx); return NULL; }
    }
    if (haddr == NULL) return ctx.out;
    if (ctx.resolver == NULL) return Py_BuildValue("(Nl)", ctx.out, strays);
    PyObject *embeds = PyTuple_New(EMB_N);  /* each column's list, None for an empty one */
    if (embeds == NULL) { links_clear(&ctx); return NULL; }
    for (int i = 0; i < EMB_N; i++) {
        PyObject *col = PyList_GET_SIZE(ctx.emb[i]) ? ctx.emb[i] : Py_None;
        Py_INCREF(col);
        PyTuple_SET_ITEM(embeds, i, col);
        Py_CLEAR(ctx.emb[i]);
        Py_CLEAR(ctx.seen[i]);
    }
    return Py_BuildValue("(NlN)", ctx.out, strays, embeds);
}

static PyMethodDef methods[] = {
    {"main_text", py_main_text, METH_VARARGS,
     "main_text(body.mem_id[, resolver, origin]) -> (main text, visible characters of the body[, main_html]):\n"
     "lib.html.maintext's walks in C; with a resolver (lib.html.content.LinkResolver, its origin), main_html too"},
    {"links", py_links, METH_VARARGS,
     "links(root.mem_id, origin or None) -> [(href or None, anchor text, URL or None, rel or None)] of the a[href] that may\n"
     "be links, in document order: the URL where LinkResolver needs no urljoin (href then None), else None\n"
     "and the href for LinkResolver; a[href] that are no link (empty, '#...', http:// alone) are left out;\n"
     "links(root.mem_id, origin, head.mem_id or None) -> (those links, which of <title>, <meta>, <base>, <link>\n"
     "occur outside <head>, as bits 1, 2, 4, 8; bit 16: an element has what a discussion's post selectors need);\n"
     "links(root.mem_id, origin, head.mem_id or None, resolver, max_each) -> (links, bits, embeds): embeds the five\n"
     "columns of lib.html.embeds.embeds in its COLUMNS order (a list or None each), URLs resolved by resolver\n"
     "(LinkResolver) where its fast paths do not suffice"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lexwalk", NULL, -1, methods, NULL, NULL, NULL, NULL};

/* W_HEADINGS from lib.html.headings.BOILER_HEADINGS: the module's frozenset, each string as UTF-8 */
static int load_headings(void) {
    PyObject *mod = PyImport_ImportModule("lib.html.headings");
    if (mod == NULL) return -1;
    PyObject *set = PyObject_GetAttrString(mod, "BOILER_HEADINGS");
    Py_DECREF(mod);
    if (set == NULL) return -1;
    PyObject *seq = PySequence_Tuple(set);
    Py_DECREF(set);
    if (seq == NULL) return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    heading_bytes = PyTuple_New(n);
    const char **words = PyMem_Calloc((size_t) n + 1, sizeof(char *));  /* NULL-terminated */
    size_t *lens = PyMem_Calloc((size_t) n + 1, sizeof(size_t));
    if (heading_bytes == NULL || words == NULL || lens == NULL) { Py_DECREF(seq); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *b = PyUnicode_AsUTF8String(PyTuple_GET_ITEM(seq, i));
        if (b == NULL) { Py_DECREF(seq); return -1; }
        PyTuple_SET_ITEM(heading_bytes, i, b);
        words[i] = PyBytes_AS_STRING(b);
        lens[i] = (size_t) PyBytes_GET_SIZE(b);
    }
    Py_DECREF(seq);
    W_HEADINGS.words = words;
    return words_index(&W_HEADINGS, lens);
}

PyMODINIT_FUNC PyInit__lexwalk(void) {
    if (W_BOILER.slots == NULL
        && (words_index(&W_BOILER, NULL) < 0 || words_index(&W_STATE, NULL) < 0 || words_index(&W_NOPRINT, NULL) < 0
            || words_index(&W_NOPRINT_PARTS, NULL) < 0))
        return NULL;
    if (W_HEADINGS.slots == NULL && load_headings() < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && (PyModule_AddStringConstant(m, "SELECTOLAX_VERSION", SELECTOLAX_VERSION) < 0
                      || PyModule_AddIntConstant(m, "API", API) < 0
                      || PyModule_AddStringConstant(m, "RULES", RULES_DIGEST) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
