/* Scanner: the native incremental scan of one call's arguments (docs/native.md, "The scanner").
 *
 * Theory of operation
 * -------------------
 * The C scan is a *sound acceptor*: a pushdown automaton over code points that accepts a
 * fragment only when the text so far is plainly a viable prefix of a JSON object text within
 * the limits (strict JSON, I-JSON surrogate rules, toolstitch's depth and digit limits), which
 * is exactly when toolstitch.json.tokenizer.ArgumentsTokenizer accepts it. On anything else
 * (an error, a limit, a rare case such as a long exponent, a feed after the close) it hands
 * over: it makes the Python tokenizer with `fallback()`, replays the accepted text
 * (`text()[:fed]`) into it, and lets it judge the fragment, so errors and their offsets are the
 * Python ones. From then on every method delegates.
 *
 * ts_scan (the C entry) never hands over itself: on such a fragment it restores the state it
 * started from (the small scalar state is scanned in a copy; container bits popped below the
 * starting depth are logged and written back) and returns TS_HANDOVER.
 *
 * Fragments are read as UCS-4 into one static buffer of CHUNK code points (shared: the GIL
 * serialises every use, and no Python code runs while it is in use); longer fragments go
 * through it in slices. This keeps no per-object buffer and never asks the str for a cached
 * UTF-8 copy (which PyUnicode_AsUTF8AndSize would keep alive with the fragment).
 */
#include "scanner.h"

#include <string.h>

#define CHUNK 2048
/* Conservative bound for Decimal: exponents with more digits hand over (Python decides). */
#define MAX_EXPONENT_DIGITS 15
/* Container bits popped below the starting depth in one fragment that can be restored. */
#define UNDO_BYTES 64
#define INLINE_STACK 8

/* What the grammar expects next (outside any token). */
enum {
    G_BEGIN,     /* nothing but whitespace so far: the top-level '{' */
    G_OBJ_OPEN,  /* after '{': a key or '}' */
    G_KEY,       /* after ',' in an object: a key */
    G_COLON,     /* after a key: ':' */
    G_VALUE,     /* after ':' or ',' in an array: a value */
    G_ARR_OPEN,  /* after '[': a value or ']' */
    G_AFTER,     /* after a value: ',' or the closing bracket of the open container */
    G_DONE       /* the top-level object has closed: whitespace only */
};

/* The token being read. */
enum {
    L_NONE,
    L_STR,      /* string body */
    L_ESC,      /* after a backslash */
    L_HEX,      /* \u and `count` hex digits */
    L_PAIR_BS,  /* after an escaped high surrogate: '\' */
    L_PAIR_U,   /* after its '\': 'u' */
    L_LOW_HEX,  /* the low half's hex digits */
    L_RAW_HIGH, /* after a raw high surrogate: a raw low one */
    L_LIT,      /* a literal, `count` characters read */
    N_MINUS,
    N_ZERO,
    N_INT,
    N_DOT,
    N_FRAC,
    N_E,
    N_ESIGN,
    N_EXP
};

typedef struct {
    Py_ssize_t depth;     /* open containers */
    Py_ssize_t digit_run; /* digits at the end of the text, outside strings */
    unsigned int code;    /* the \u escape's value so far */
    unsigned char grammar;
    unsigned char lex;
    unsigned char key;     /* the open string is a key */
    unsigned char count;   /* hex digits, literal characters or exponent digits read */
    unsigned char literal; /* which literal (index into LITERAL_WORDS) */
    unsigned char started;
    unsigned char raw_pair; /* a raw surrogate half has been accepted (in a string) */
} ScanState;

typedef struct {
    PyObject_HEAD
    ScanState st;
    Py_ssize_t fed;
    Py_ssize_t max_depth;
    Py_ssize_t max_digits;
    unsigned char *stack; /* one bit per open container: 1 object, 0 array */
    Py_ssize_t stack_bytes;
    PyObject *fallback;
    PyObject *text;
    PyObject *delegate;      /* the Python tokenizer once handed over, else NULL */
    PyObject *delegate_feed; /* its bound feed */
    unsigned char inline_stack[INLINE_STACK];
} Scanner;

static const char *const LITERAL_WORDS[3] = {"true", "false", "null"};
static const unsigned char LITERAL_LENGTHS[3] = {4, 5, 4};

static Py_UCS4 chunk_buffer[CHUNK];

/* -- the container stack ---------------------------------------------------------------- */

static inline int stack_get(const Scanner *self, Py_ssize_t level) {
    return (self->stack[level >> 3] >> (level & 7)) & 1;
}

static inline void stack_set(Scanner *self, Py_ssize_t level, int bit) {
    unsigned char mask = (unsigned char)(1u << (level & 7));
    if (bit) {
        self->stack[level >> 3] |= mask;
    } else {
        self->stack[level >> 3] &= (unsigned char)~mask;
    }
}

/* Room for `level` (< max_depth). 0, or -1 with MemoryError. */
static int stack_reserve(Scanner *self, Py_ssize_t level) {
    Py_ssize_t need = (level >> 3) + 1;
    if (need <= self->stack_bytes) {
        return 0;
    }
    Py_ssize_t size = self->stack_bytes * 2;
    if (size < need) {
        size = need;
    }
    Py_ssize_t most = (self->max_depth >> 3) + 1;
    if (size > most) {
        size = most;
    }
    unsigned char *grown = PyMem_Malloc((size_t)size);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(grown, self->stack, (size_t)self->stack_bytes);
    memset(grown + self->stack_bytes, 0, (size_t)(size - self->stack_bytes));
    if (self->stack != self->inline_stack) {
        PyMem_Free(self->stack);
    }
    self->stack = grown;
    self->stack_bytes = size;
    return 0;
}

/* Bits of the levels popped below the depth a scan started from, to restore on a reject. */
typedef struct {
    Py_ssize_t start; /* depth at the start of the scan */
    Py_ssize_t low;   /* lowest depth reached */
    unsigned char bits[UNDO_BYTES];
} Undo;

static void undo_restore(Scanner *self, const Undo *undo) {
    for (Py_ssize_t level = undo->low; level < undo->start; level++) {
        Py_ssize_t i = undo->start - 1 - level;
        stack_set(self, level, (undo->bits[i >> 3] >> (i & 7)) & 1);
    }
}

/* -- the scan --------------------------------------------------------------------------- */

enum { SCAN_OK = 0, SCAN_REJECT = 1, SCAN_ERROR = -1 };


static inline int hex_value(Py_UCS4 c) {
    if (c >= '0' && c <= '9') return (int)(c - '0');
    if (c >= 'a' && c <= 'f') return (int)(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return (int)(c - 'A' + 10);
    return -1;
}

static int push(Scanner *self, ScanState *s, int object) {
    if (s->depth >= self->max_depth) {
        return SCAN_REJECT; /* DepthExceeded: Python says so */
    }
    if (stack_reserve(self, s->depth) < 0) {
        return SCAN_ERROR;
    }
    stack_set(self, s->depth, object);
    s->depth++;
    s->grammar = object ? G_OBJ_OPEN : G_ARR_OPEN;
    return SCAN_OK;
}

static int pop(Scanner *self, ScanState *s, Undo *undo) {
    s->depth--;
    if (s->depth < undo->low) {
        Py_ssize_t i = undo->start - 1 - s->depth;
        if (i >= UNDO_BYTES * 8) {
            s->depth++;
            return SCAN_REJECT; /* too many levels closed at once to restore: rare */
        }
        unsigned char mask = (unsigned char)(1u << (i & 7));
        if (stack_get(self, s->depth)) {
            undo->bits[i >> 3] |= mask;
        } else {
            undo->bits[i >> 3] &= (unsigned char)~mask;
        }
        undo->low = s->depth;
    }
    s->grammar = s->depth ? G_AFTER : G_DONE;
    return SCAN_OK;
}

/* A value may start with c (grammar G_VALUE or G_ARR_OPEN). */
static int value_start(Scanner *self, ScanState *s, Py_UCS4 c) {
    switch (c) {
    case '"':
        s->lex = L_STR;
        s->key = 0;
        return SCAN_OK;
    case '{':
        return push(self, s, 1);
    case '[':
        return push(self, s, 0);
    case '-':
        s->lex = N_MINUS;
        s->digit_run = 0;
        return SCAN_OK;
    case 't':
    case 'f':
    case 'n':
        s->lex = L_LIT;
        s->literal = c == 't' ? 0 : c == 'f' ? 1 : 2;
        s->count = 1;
        return SCAN_OK;
    default:
        if (c >= '0' && c <= '9') {
            s->lex = c == '0' ? N_ZERO : N_INT;
            s->digit_run = 1;
            return s->digit_run > self->max_digits ? SCAN_REJECT : SCAN_OK;
        }
        return SCAN_REJECT;
    }
}

/* One significant character between tokens. */
static int structure(Scanner *self, ScanState *s, Undo *undo, Py_UCS4 c) {
    int top;
    switch (s->grammar) {
    case G_BEGIN:
        if (c != '{') return SCAN_REJECT;
        s->started = 1;
        return push(self, s, 1);
    case G_OBJ_OPEN:
        if (c == '}') return pop(self, s, undo);
        /* fall through */
    case G_KEY:
        if (c != '"') return SCAN_REJECT;
        s->lex = L_STR;
        s->key = 1;
        return SCAN_OK;
    case G_COLON:
        if (c != ':') return SCAN_REJECT;
        s->grammar = G_VALUE;
        return SCAN_OK;
    case G_ARR_OPEN:
        if (c == ']') return pop(self, s, undo);
        /* fall through */
    case G_VALUE:
        return value_start(self, s, c);
    case G_AFTER:
        top = stack_get(self, s->depth - 1);
        if (c == ',') {
            s->grammar = top ? G_KEY : G_VALUE;
            return SCAN_OK;
        }
        if (c == (top ? '}' : ']')) return pop(self, s, undo);
        return SCAN_REJECT;
    default: /* G_DONE */
        return SCAN_REJECT;
    }
}

/* Internal to number(): the number ended, complete, before c. */
enum { NUMBER_ENDED = 2 };

/* After the integer digits (N_INT, N_ZERO): more digits, a fraction, an exponent, or the
 * end of the number. */
static inline int after_integer(ScanState *s, Py_UCS4 c, int digit) {
    if (digit) {
        return s->lex == N_INT ? SCAN_OK : SCAN_REJECT; /* N_ZERO: a leading zero */
    }
    if (c == '.') {
        s->lex = N_DOT;
    } else if (c == 'e' || c == 'E') {
        s->lex = N_E;
    } else {
        return NUMBER_ENDED;
    }
    s->digit_run = 0;
    return SCAN_OK;
}

/* The exponent (N_E, N_ESIGN, N_EXP): its sign, its first digit, the digits after it. */
static inline int exponent(ScanState *s, Py_UCS4 c, int digit) {
    if (s->lex == N_E && (c == '+' || c == '-')) {
        s->lex = N_ESIGN;
        return SCAN_OK;
    }
    if (s->lex != N_EXP) { /* N_E or N_ESIGN: a digit must come */
        if (!digit) return SCAN_REJECT;
        s->lex = N_EXP;
        s->count = 1;
        return SCAN_OK;
    }
    if (!digit) return NUMBER_ENDED;
    return ++s->count > MAX_EXPONENT_DIGITS ? SCAN_REJECT : SCAN_OK;
}

/* After a fraction's digits (N_FRAC), at a character that is not a digit: an exponent, or
 * the end of the number. */
static inline int after_integer_fraction(ScanState *s, Py_UCS4 c) {
    if (c != 'e' && c != 'E') return NUMBER_ENDED;
    s->lex = N_E;
    s->digit_run = 0;
    return SCAN_OK;
}

/* The number token goes on with c, or ends before it (then c is read again). */
static int number(Scanner *self, ScanState *s, Py_UCS4 c, int *again) {
    int digit = c >= '0' && c <= '9';
    if (digit && ++s->digit_run > self->max_digits) return SCAN_REJECT;
    int r;
    switch (s->lex) {
    case N_MINUS:
        if (!digit) return SCAN_REJECT;
        s->lex = c == '0' ? N_ZERO : N_INT;
        return SCAN_OK;
    case N_INT:
    case N_ZERO:
        r = after_integer(s, c, digit);
        break;
    case N_DOT:
        if (!digit) return SCAN_REJECT;
        s->lex = N_FRAC;
        return SCAN_OK;
    case N_FRAC:
        r = digit ? SCAN_OK : after_integer_fraction(s, c);
        break;
    default: /* N_E, N_ESIGN, N_EXP */
        r = exponent(s, c, digit);
        break;
    }
    if (r != NUMBER_ENDED) return r;
    s->digit_run = 0;
    s->lex = L_NONE;
    s->grammar = G_AFTER;
    *again = 1;
    return SCAN_OK;
}

/* The characters that stand for themselves or one control character after a backslash:
 * the quote, the backslash, / b f n r t. */
static inline int is_short_escape(Py_UCS4 c) {
    switch (c) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
        return 1;
    default:
        return 0;
    }
}

/* One hex digit of a \uXXXX escape (L_HEX). A code unit that can only become a lone low
 * surrogate is refused at its second digit; a high one waits for its low half. */
static inline int escape_hex(ScanState *s, Py_UCS4 c) {
    int v = hex_value(c);
    if (v < 0) return SCAN_REJECT;
    s->code = (s->code << 4) | (unsigned int)v;
    s->count++;
    if (s->count == 2 && s->code >= 0xDC && s->code <= 0xDF) {
        return SCAN_REJECT; /* can only become a lone low surrogate */
    }
    if (s->count == 4) {
        s->lex = (s->code >= 0xD800 && s->code <= 0xDBFF) ? L_PAIR_BS : L_STR;
    }
    return SCAN_OK;
}

/* One hex digit of the low half's \uXXXX (L_LOW_HEX): DC00 to DFFF only. */
static inline int low_half_hex(ScanState *s, Py_UCS4 c) {
    int v = hex_value(c);
    if (v < 0) return SCAN_REJECT;
    if (s->count == 0 && v != 0xD) return SCAN_REJECT;
    if (s->count == 1 && v < 0xC) return SCAN_REJECT;
    if (++s->count == 4) s->lex = L_STR;
    return SCAN_OK;
}

/* Inside a string, at an escape or surrogate state (not plain body text). */
static int string_special(ScanState *s, Py_UCS4 c) {
    switch (s->lex) {
    case L_ESC:
        if (c == 'u') {
            s->lex = L_HEX;
            s->count = 0;
            s->code = 0;
            return SCAN_OK;
        }
        if (!is_short_escape(c)) return SCAN_REJECT;
        s->lex = L_STR;
        return SCAN_OK;
    case L_HEX:
        return escape_hex(s, c);
    case L_PAIR_BS:
        if (c != '\\') return SCAN_REJECT;
        s->lex = L_PAIR_U;
        return SCAN_OK;
    case L_PAIR_U:
        if (c != 'u') return SCAN_REJECT;
        s->lex = L_LOW_HEX;
        s->count = 0;
        return SCAN_OK;
    case L_LOW_HEX:
        return low_half_hex(s, c);
    default: /* L_RAW_HIGH */
        if (c < 0xDC00 || c > 0xDFFF) return SCAN_REJECT;
        s->lex = L_STR;
        return SCAN_OK;
    }
}

/* Plain text of a string from p[*at] (L_STR) up to its first character that is not, which
 * is read too: *at is past it, or n if the chunk ended first. */
static inline int string_text(ScanState *s, const Py_UCS4 *p, Py_ssize_t n, Py_ssize_t *at) {
    Py_ssize_t i = *at;
    Py_UCS4 c = p[i];
    while (c >= 0x20 && c != '"' && c != '\\' && (c < 0xD800 || c > 0xDFFF)) {
        if (++i == n) {
            *at = n;
            return SCAN_OK;
        }
        c = p[i];
    }
    *at = i + 1;
    if (c == '"') {
        s->lex = L_NONE;
        s->grammar = s->key ? G_COLON : G_AFTER;
    } else if (c == '\\') {
        s->lex = L_ESC;
    } else if (c >= 0xD800 && c <= 0xDBFF) {
        s->lex = L_RAW_HIGH;
        s->raw_pair = 1;
    } else {
        return SCAN_REJECT; /* a control character or a lone low surrogate */
    }
    return SCAN_OK;
}

/* The next character of a literal (L_LIT: true, false, null). */
static inline int literal(ScanState *s, Py_UCS4 c) {
    if (c != (Py_UCS4)(unsigned char)LITERAL_WORDS[s->literal][s->count]) {
        return SCAN_REJECT;
    }
    if (++s->count == LITERAL_LENGTHS[s->literal]) {
        s->lex = L_NONE;
        s->grammar = G_AFTER;
    }
    return SCAN_OK;
}

/* Scan n code points. SCAN_OK, SCAN_REJECT or SCAN_ERROR. */
static int scan_chunk(Scanner *self, ScanState *s, Undo *undo, const Py_UCS4 *p, Py_ssize_t n) {
    Py_ssize_t i = 0;
    int r;
    while (i < n) {
        Py_UCS4 c = p[i];
        switch (s->lex) {
        case L_NONE:
            if (ts_is_json_ws(c)) {
                i++;
                continue;
            }
            r = structure(self, s, undo, c);
            if (r != SCAN_OK) return r;
            if (s->lex == L_STR) s->digit_run = 0;
            i++;
            continue;
        case L_STR:
            r = string_text(s, p, n, &i);
            break;
        case L_LIT:
            r = literal(s, c);
            i++;
            break;
        case N_MINUS:
        case N_ZERO:
        case N_INT:
        case N_DOT:
        case N_FRAC:
        case N_E:
        case N_ESIGN:
        case N_EXP: {
            int again = 0;
            r = number(self, s, c, &again);
            if (!again) i++;
            break;
        }
        default:
            r = string_special(s, c);
            i++;
            break;
        }
        if (r != SCAN_OK) return r;
    }
    return SCAN_OK;
}

/* Code points [start, start + count) of fragment in chunk_buffer; NULL with an exception. */
static const Py_UCS4 *read_chunk(PyObject *fragment, Py_ssize_t length, Py_ssize_t start,
                                 Py_ssize_t count) {
    if (start == 0 && count == length) {
        return PyUnicode_AsUCS4(fragment, chunk_buffer, CHUNK, 0);
    }
    PyObject *piece = PyUnicode_Substring(fragment, start, start + count);
    if (piece == NULL) return NULL;
    Py_UCS4 *done = PyUnicode_AsUCS4(piece, chunk_buffer, CHUNK, 0);
    Py_DECREF(piece);
    return done;
}

/* The native decision on one fragment; the scanner is unchanged unless TS_OPEN/TS_CLOSED. */
static int scan(Scanner *self, PyObject *fragment) {
    if (!PyUnicode_Check(fragment)) return TS_HANDOVER;
    Py_ssize_t length = PyUnicode_GetLength(fragment);
    if (length < 0) return -1;
    if (length == 0) return self->st.started ? TS_HANDOVER : TS_OPEN;
    if (self->st.grammar == G_DONE) return TS_HANDOVER; /* fed after the close */
    ScanState s = self->st;
    Undo undo;
    undo.start = undo.low = s.depth;
    for (Py_ssize_t start = 0; start < length; start += CHUNK) {
        Py_ssize_t count = length - start < CHUNK ? length - start : CHUNK;
        const Py_UCS4 *p = read_chunk(fragment, length, start, count);
        if (p == NULL) {
            undo_restore(self, &undo);
            return -1;
        }
        int r = scan_chunk(self, &s, &undo, p, count);
        if (r != SCAN_OK) {
            undo_restore(self, &undo);
            return r == SCAN_REJECT ? TS_HANDOVER : -1;
        }
    }
    self->st = s;
    self->fed += length;
    return s.grammar == G_DONE ? TS_CLOSED : TS_OPEN;
}

/* -- handing over ----------------------------------------------------------------------- */

/* Make the Python tokenizer and replay the accepted text into it. 0 or -1. */
static int hand_over(Scanner *self) {
    PyObject *delegate = PyObject_CallNoArgs(self->fallback);
    if (delegate == NULL) return -1;
    PyObject *feed = PyObject_GetAttrString(delegate, "feed");
    if (feed == NULL) goto fail;
    if (self->fed > 0) {
        PyObject *text = PyObject_CallNoArgs(self->text);
        if (text == NULL) goto fail_feed;
        PyObject *prefix = PyUnicode_Check(text) ? PyUnicode_Substring(text, 0, self->fed) : NULL;
        if (prefix == NULL && !PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "Scanner: text() must return a str");
        }
        Py_DECREF(text);
        if (prefix == NULL) goto fail_feed;
        PyObject *done = PyObject_CallFunctionObjArgs(feed, prefix, NULL);
        Py_DECREF(prefix);
        if (done == NULL) goto fail_feed;
        Py_DECREF(done);
    }
    self->delegate = delegate;
    self->delegate_feed = feed;
    return 0;
fail_feed:
    Py_DECREF(feed);
fail:
    Py_DECREF(delegate);
    return -1;
}

/* -- the C interface -------------------------------------------------------------------- */

static void scanner_dealloc(PyObject *op);
static PyTypeObject *known_type = NULL; /* the last Scanner type seen (one per interpreter) */

static int is_scanner(PyObject *obj) {
    PyTypeObject *type = Py_TYPE(obj);
    if (type == known_type) return 1;
    if (PyType_GetSlot(type, Py_tp_dealloc) != (void *)scanner_dealloc) return 0;
    known_type = type;
    return 1;
}

int ts_scanner_is_native(PyObject *module, PyObject *obj) {
    (void)module;
    return is_scanner(obj) && ((Scanner *)obj)->delegate == NULL;
}

int ts_scanner_raw_pairs(PyObject *scanner) {
    const Scanner *self = (const Scanner *)scanner;
    return self->delegate != NULL || self->st.raw_pair;
}

int ts_scan(PyObject *scanner, PyObject *fragment) {
    Scanner *self = (Scanner *)scanner;
    if (self->delegate != NULL) return TS_HANDOVER;
    return scan(self, fragment);
}

int ts_scan_string_run(PyObject *scanner, PyObject *fragment, Py_ssize_t length) {
    Scanner *self = (Scanner *)scanner;
    if (self->delegate != NULL) return TS_HANDOVER;
    if (self->st.lex != L_STR || length <= 0) return scan(self, fragment);
    self->fed += length; /* plain text of the open string: nothing else moves */
    return TS_OPEN;
}

/* -- the Python type -------------------------------------------------------------------- */

static PyObject *scanner_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"max_depth", "max_number_digits", "fallback", "text", NULL};
    Py_ssize_t max_depth = -1, max_digits = -1;
    PyObject *fallback = NULL, *text = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|nnOO:Scanner", keywords, &max_depth,
                                     &max_digits, &fallback, &text)) {
        return NULL;
    }
    if (max_depth < 1 || max_digits < 1 || fallback == NULL || text == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "Scanner() needs max_depth >= 1, max_number_digits >= 1, fallback and text");
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    Scanner *self = (Scanner *)alloc(type, 0);
    if (self == NULL) return NULL;
    self->max_depth = max_depth;
    self->max_digits = max_digits;
    self->stack = self->inline_stack;
    self->stack_bytes = INLINE_STACK;
    Py_INCREF(fallback);
    self->fallback = fallback;
    Py_INCREF(text);
    self->text = text;
    return (PyObject *)self;
}

static int scanner_traverse(PyObject *op, visitproc visit, void *arg) {
    Scanner *self = (Scanner *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->fallback);
    Py_VISIT(self->text);
    Py_VISIT(self->delegate);
    Py_VISIT(self->delegate_feed);
    return 0;
}

static int scanner_clear(PyObject *op) {
    Scanner *self = (Scanner *)op;
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->text);
    Py_CLEAR(self->delegate_feed);
    Py_CLEAR(self->delegate);
    return 0;
}

static void scanner_dealloc(PyObject *op) {
    Scanner *self = (Scanner *)op;
    PyTypeObject *type = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    scanner_clear(op);
    if (self->stack != self->inline_stack) {
        PyMem_Free(self->stack);
    }
    freefunc release = (freefunc)PyType_GetSlot(type, Py_tp_free);
    release(op);
    Py_DECREF(type);
}

static PyObject *scanner_feed(PyObject *op, PyObject *fragment) {
    Scanner *self = (Scanner *)op;
    if (self->delegate == NULL) {
        int r = scan(self, fragment);
        if (r < 0) return NULL;
        if (r != TS_HANDOVER) return PyBool_FromLong(r == TS_CLOSED);
        if (hand_over(self) < 0) return NULL;
    }
    return PyObject_CallFunctionObjArgs(self->delegate_feed, fragment, NULL);
}

/* lexicon.skim's close from the native state: strings and brackets only, nothing checked. */
static Py_ssize_t skim_close(const Py_UCS4 *p, Py_ssize_t n, Py_ssize_t base, Py_ssize_t *depth,
                             int *in_string, int *escape) {
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = p[i];
        if (*in_string) {
            if (*escape) {
                *escape = 0;
            } else if (c == '\\') {
                *escape = 1;
            } else if (c == '"') {
                *in_string = 0;
            }
        } else if (c == '"') {
            *in_string = 1;
        } else if (c == '{' || c == '[') {
            ++*depth;
        } else if ((c == '}' || c == ']') && --*depth <= 0) {
            return base + i + 1;
        }
    }
    return -1;
}

static PyObject *scanner_close_offset(PyObject *op, PyObject *fragment) {
    Scanner *self = (Scanner *)op;
    if (self->delegate != NULL) {
        return PyObject_CallMethod(self->delegate, "close_offset", "(O)", fragment);
    }
    if (!PyUnicode_Check(fragment)) {
        PyErr_SetString(PyExc_TypeError, "close_offset() needs a str");
        return NULL;
    }
    const ScanState *s = &self->st;
    if (s->started && s->depth == 0) return PyLong_FromLong(0);
    Py_ssize_t length = PyUnicode_GetLength(fragment);
    if (length < 0) return NULL;
    Py_ssize_t depth = s->depth;
    int in_string = s->lex >= L_STR && s->lex <= L_RAW_HIGH;
    int escape = s->lex == L_ESC || s->lex == L_PAIR_U;
    for (Py_ssize_t start = 0; start < length; start += CHUNK) {
        Py_ssize_t count = length - start < CHUNK ? length - start : CHUNK;
        const Py_UCS4 *p = read_chunk(fragment, length, start, count);
        if (p == NULL) return NULL;
        Py_ssize_t close = skim_close(p, count, start, &depth, &in_string, &escape);
        if (close >= 0) return PyLong_FromSsize_t(close);
    }
    return PyLong_FromLong(-1);
}

static PyObject *scanner_set_listener(PyObject *op, PyObject *listener) {
    Scanner *self = (Scanner *)op;
    if (self->delegate == NULL) {
        if (listener == Py_None && self->fed == 0) Py_RETURN_NONE; /* nothing changes */
        if (hand_over(self) < 0) return NULL;
    }
    return PyObject_CallMethod(self->delegate, "set_listener", "(O)", listener);
}

static PyObject *scanner_close(PyObject *op, PyObject *unused) {
    Scanner *self = (Scanner *)op;
    (void)unused;
    if (self->delegate != NULL) {
        return PyObject_CallMethod(self->delegate, "close", NULL);
    }
    Py_RETURN_NONE;
}

/* Test hook: ts_scan from Python (0 open, 1 closed, 2 handover with nothing changed). */
static PyObject *scanner_try_scan(PyObject *op, PyObject *fragment) {
    if (!PyUnicode_Check(fragment)) {
        PyErr_SetString(PyExc_TypeError, "_scan() needs a str");
        return NULL;
    }
    int r = ts_scan(op, fragment);
    return r < 0 ? NULL : PyLong_FromLong(r);
}

static PyObject *scanner_native(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(((Scanner *)op)->delegate == NULL);
}

static PyObject *delegated(Scanner *self, const char *name) {
    return PyObject_GetAttrString(self->delegate, name);
}

static PyObject *scanner_fed(PyObject *op, void *closure) {
    Scanner *self = (Scanner *)op;
    (void)closure;
    return self->delegate ? delegated(self, "fed") : PyLong_FromSsize_t(self->fed);
}

static PyObject *scanner_closed(PyObject *op, void *closure) {
    Scanner *self = (Scanner *)op;
    (void)closure;
    if (self->delegate) return delegated(self, "closed");
    return PyBool_FromLong(self->st.started && self->st.depth == 0);
}

static PyObject *scanner_started(PyObject *op, void *closure) {
    Scanner *self = (Scanner *)op;
    (void)closure;
    return self->delegate ? delegated(self, "started") : PyBool_FromLong(self->st.started);
}

static PyObject *scanner_depth(PyObject *op, void *closure) {
    Scanner *self = (Scanner *)op;
    (void)closure;
    return self->delegate ? delegated(self, "depth") : PyLong_FromSsize_t(self->st.depth);
}

static PyObject *scanner_exact_close(PyObject *op, void *closure) {
    Scanner *self = (Scanner *)op;
    (void)closure;
    return self->delegate ? delegated(self, "exact_close") : PyBool_FromLong(1);
}

static PyMethodDef scanner_methods[] = {
    {"feed", scanner_feed, METH_O,
     "Validate the next non-empty fragment; True if it closes the object."},
    {"close_offset", scanner_close_offset, METH_O,
     "Where the fragment, fed next, would close the object (-1: it would not; 0: closed)."},
    {"set_listener", scanner_set_listener, METH_O,
     "Attach a JSON event listener (before the first fragment): hands over to Python."},
    {"close", scanner_close, METH_NOARGS, "Release the scanner; it is not fed again."},
    {"_scan", scanner_try_scan, METH_O,
     "Test hook: the C entry ts_scan (0 open, 1 closed, 2 handover: nothing changed)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef scanner_getset[] = {
    {"fed", scanner_fed, NULL, "Characters fed so far.", NULL},
    {"closed", scanner_closed, NULL, "Whether the top-level object has closed.", NULL},
    {"started", scanner_started, NULL, "Whether a non-whitespace character has been fed.", NULL},
    {"depth", scanner_depth, NULL, "How many containers are open now.", NULL},
    {"exact_close", scanner_exact_close, NULL,
     "Whether text after the closing brace is refused within the closing fragment.", NULL},
    {"native", scanner_native, NULL, "Whether the scan is still native (not handed over).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot scanner_slots[] = {
    {Py_tp_doc, "Scanner(max_depth, max_number_digits, fallback, text): the native "
                "ArgumentsTokenizer for the common case (docs/native.md)."},
    {Py_tp_new, scanner_new},
    {Py_tp_dealloc, scanner_dealloc},
    {Py_tp_traverse, scanner_traverse},
    {Py_tp_clear, scanner_clear},
    {Py_tp_methods, scanner_methods},
    {Py_tp_getset, scanner_getset},
    {0, NULL},
};

static PyType_Spec scanner_spec = {
    "toolstitch._native.Scanner",
    sizeof(Scanner),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    scanner_slots,
};

int ts_scanner_init(PyObject *module) {
    PyObject *type = PyType_FromModuleAndSpec(module, &scanner_spec, NULL);
    if (type == NULL) return -1;
    if (PyModule_AddObject(module, "Scanner", type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}
