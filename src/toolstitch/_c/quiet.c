/* The quiet lane (docs/native.md, "The quiet lane").
 *
 * Most pieces of a model's markup give no events: a piece inside a marker (`<tool_`, of
 * `<tool_call>`), the name in a header, whitespace between tags. The Python reader says,
 * after each piece it reads, what pieces would give nothing now (TextReader.quiet, as data:
 * the markers its scanner looks for, what it holds of one, what plain text it reads without a
 * word and how much). C then holds such pieces back, counted as read, and the Python Stitcher
 * reads them joined to the next piece that is not quiet, or at close: the reader reads any
 * cut of a text alike, and these pieces give nothing. This file only decides whether a piece
 * is quiet; it knows nothing of formats. */
#include "quiet.h"

/* Whether `text` is a proper prefix of one of `markers` (a tuple of str): 1, 0 or -1. */
static int proper_prefix(PyObject *markers, PyObject *text) {
    Py_ssize_t n = PyUnicode_GetLength(text), count = PyTuple_Size(markers);
    if (n < 0 || count < 0) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *marker = PyTuple_GetItem(markers, i);
        if (marker == NULL || !PyUnicode_Check(marker)) {
            return marker == NULL ? -1 : 0;
        }
        if (PyUnicode_GetLength(marker) > n) {
            Py_ssize_t match = PyUnicode_Tailmatch(marker, text, 0, n, -1);
            if (match != 0) {
                return match < 0 ? -1 : 1;
            }
        }
    }
    return 0;
}

/* Where the first character of `stops` is in `piece` (its length if none), or -1. */
static Py_ssize_t first_stop(PyObject *piece, PyObject *stops) {
    Py_ssize_t n = PyUnicode_GetLength(piece), count = PyUnicode_GetLength(stops);
    if (n < 0 || count < 0) {
        return -1;
    }
    Py_ssize_t first = n;
    for (Py_ssize_t i = 0; i < count && first > 0; i++) {
        Py_UCS4 stop = PyUnicode_ReadChar(stops, i);
        Py_ssize_t at = PyUnicode_FindChar(piece, stop, 0, first, 1);
        if (at == -2) {
            return -1;
        }
        if (at >= 0) {
            first = at;
        }
    }
    return first;
}

/* Whether piece[:end] is plain text the lane may take: 1, 0 or -1. */
static int plain_text(const QuietLane *lane, PyObject *piece, Py_ssize_t end) {
    if (lane->plain == 0 || end > lane->room) {
        return 0;
    }
    if (lane->plain == 1) {
        return 1;
    }
    for (Py_ssize_t i = 0; i < end; i++) {
        Py_UCS4 c = PyUnicode_ReadChar(piece, i);
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
            return c == (Py_UCS4)-1 ? -1 : 0;
        }
    }
    return 1;
}

/* pending += piece; tail = new_tail (stolen); room -= plain. 0 or -1. */
static int take(QuietLane *lane, PyObject *piece, PyObject *new_tail, Py_ssize_t plain) {
    PyObject *pending = lane->pending != NULL && lane->pending != Py_None
                            ? PyUnicode_Concat(lane->pending, piece)
                            : Py_NewRef(piece);
    if (pending == NULL) {
        Py_DECREF(new_tail);
        return -1;
    }
    PyObject *old_pending = lane->pending, *old_tail = lane->tail;
    lane->pending = pending;
    lane->tail = new_tail;
    Py_XDECREF(old_pending);
    Py_XDECREF(old_tail);
    lane->room -= plain;
    return 1;
}

int ts_quiet_piece(QuietLane *lane, PyObject *piece) {
    if (lane->markers == NULL || !PyTuple_Check(lane->markers) || lane->tail == NULL ||
        !PyUnicode_Check(lane->tail) || lane->stops == NULL || !PyUnicode_Check(lane->stops)) {
        return 0;
    }
    Py_ssize_t size = PyUnicode_GetLength(piece);
    Py_ssize_t held = lane->pending != NULL && PyUnicode_Check(lane->pending)
                          ? PyUnicode_GetLength(lane->pending)
                          : 0;
    if (size <= 0 || held + size > TS_QUIET_MAX) {
        return 0;
    }
    /* What is held and the piece: still a proper prefix of a marker? */
    PyObject *tail = PyUnicode_Concat(lane->tail, piece);
    if (tail == NULL) {
        return -1;
    }
    int prefix = proper_prefix(lane->markers, tail);
    if (prefix != 0) {
        if (prefix < 0) {
            Py_DECREF(tail);
            return -1;
        }
        return take(lane, piece, tail, 0);
    }
    Py_DECREF(tail);
    if (lane->plain == 0 || PyUnicode_GetLength(lane->tail) != 0) {
        return 0;
    }
    /* Nothing held: plain text up to the first marker character, then a marker's prefix. */
    Py_ssize_t stop = first_stop(piece, lane->stops);
    int plain = stop < 0 ? -1 : plain_text(lane, piece, stop);
    if (plain <= 0) {
        return plain;
    }
    PyObject *rest = PyUnicode_Substring(piece, stop, size);
    if (rest == NULL) {
        return -1;
    }
    prefix = stop == size ? 1 : proper_prefix(lane->markers, rest);
    if (prefix <= 0) {
        Py_DECREF(rest);
        return prefix;
    }
    return take(lane, piece, rest, stop);
}

int ts_quiet_traverse(QuietLane *lane, visitproc visit, void *arg) {
    Py_VISIT(lane->markers);
    Py_VISIT(lane->tail);
    Py_VISIT(lane->stops);
    Py_VISIT(lane->pending);
    return 0;
}

void ts_quiet_clear(QuietLane *lane) {
    Py_CLEAR(lane->markers);
    Py_CLEAR(lane->tail);
    Py_CLEAR(lane->stops);
    Py_CLEAR(lane->pending);
}
