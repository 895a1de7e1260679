/* The quiet lane: pieces of a model's text that give no events, held back in C (quiet.c). */
#ifndef TOOLSTITCH_QUIET_H
#define TOOLSTITCH_QUIET_H

#include <Python.h>

/* The most characters the lane holds back; a piece past it goes to Python. */
#define TS_QUIET_MAX 4096

/* The lane as the Python Stitcher sets it after each piece it reads (its _quiet_* members,
 * from TextReader.quiet: a bodies.Quiet) and what C keeps between pieces. */
typedef struct {
    PyObject *markers;  /* _quiet_markers: a tuple of str, or None/NULL: no lane */
    PyObject *tail;     /* _quiet_tail: str, what may still become a marker */
    PyObject *stops;    /* _quiet_stops: str, the markers' first characters */
    PyObject *pending;  /* _quiet_pending: str, the pieces held back, or None/NULL */
    Py_ssize_t room;    /* _quiet_room: plain characters that may still come quietly */
    char plain;         /* _quiet_plain: 0 no plain text, 1 any, 2 whitespace only */
} QuietLane;

/* 1 if `piece` (an exact str) gives no events: it is then added to `pending` and the lane
 * moved on; 0 if not (nothing changed); -1 with an exception set. */
int ts_quiet_piece(QuietLane *lane, PyObject *piece);

int ts_quiet_traverse(QuietLane *lane, visitproc visit, void *arg);
void ts_quiet_clear(QuietLane *lane);

#endif
