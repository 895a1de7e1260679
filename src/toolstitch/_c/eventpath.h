/* The event fast path: Stitcher.feed's commonest event in C (docs/native.md, "The event
 * fast path").
 *
 * Two types:
 *   BlockFragments - the C form of an adapter's `_fragment` for content-block streams
 *                    (Anthropic): a plain dict event in, `(core index, fragment)` or None out,
 *                    exactly as the Python method it is built with;
 *   StitcherBase   - the base of the native Stitcher: its `_fragment` member and a C `feed`
 *                    that takes such an event straight to the assembler's C feed_arguments;
 *                    everything else goes to the Python Stitcher.feed, with nothing changed. */
#ifndef TOOLSTITCH_EVENTPATH_H
#define TOOLSTITCH_EVENTPATH_H

#include <Python.h>

/* Adds BlockFragments, StitcherBase and configure_event_path() to the module (module.c's
 * exec slot). 0 or -1 with an exception set. */
int ts_eventpath_init(PyObject *module);

/* The native Stitcher whose C `feed` the bound method `feed` is (borrowed), or NULL. */
PyObject *ts_native_feed_of(PyObject *feed);

/* That `feed` called with one piece, C to C: its events, or NULL with an exception set. */
PyObject *ts_stitcher_feed(PyObject *stitcher, PyObject *piece);

#endif
