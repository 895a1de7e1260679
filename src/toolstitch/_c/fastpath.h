/* The fast feed: the assembler's hot path above the scanner, in C (docs/native.md,
 * "The fast feed").
 *
 * Three types, bases of what toolstitch.core.assembler defines on the native path:
 *   TextBuffer    - vocab.text.ChunkedText's interface and semantics, in C;
 *   CallBase      - the members of a call record that the hot path reads;
 *   AssemblerBase - the assembler's hot members and its C feed / feed_arguments.
 * Anything but the common case goes to the Python methods, with the state untouched. */
#ifndef TOOLSTITCH_FASTPATH_H
#define TOOLSTITCH_FASTPATH_H

#include <Python.h>

/* Adds TextBuffer, CallBase, AssemblerBase and configure_fast_path() to the module
 * (called by module.c's exec slot). 0 or -1 with an exception set. */
int ts_fastpath_init(PyObject *module);

#endif
