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

/* AssemblerBase.feed_arguments(index, fragment) on `assembler`, called from C: the C hot path
 * when `assembler` is an AssemblerBase (configured) and the arguments are an exact int >= 0
 * and an exact str; otherwise the method `feed_arguments` of the object. The events, or NULL
 * with an exception set. (Callers make sure that no subclass overrides the method.) */
PyObject *ts_feed_arguments(PyObject *assembler, PyObject *index, PyObject *fragment);

/* ts_feed_arguments, told (`trusted`) that the fragment is plain string content valid as it
 * is (scanner.h, ts_scan_string_run): the raw text lane's. */
PyObject *ts_feed_string_run(PyObject *assembler, PyObject *index, PyObject *fragment,
                             int trusted);

/* Assembler.feed({"index": index, "id": call_id, "function": {"name": name}}) on
 * `assembler`, called from C: the C paths (the start path first) when `assembler` is exactly
 * the native Assembler (configure_start_path()), `index` an exact int >= 0 and `call_id` and
 * `name` exact str; otherwise the method `feed` of the object, with that dict. The events, or
 * NULL with an exception set. */
PyObject *ts_feed_start(PyObject *assembler, PyObject *index, PyObject *call_id, PyObject *name);

/* `index < 0` for an exact int. */
int ts_is_negative(PyObject *index);

/* 1 if `event` is exactly an ArgumentsDelta (once configured), else 0. */
int ts_is_arguments_delta(PyObject *event);

/* The state of call `index` in the `_calls` of `assembler`, an AssemblerBase: 1 with *state
 * borrowed (held by the call, which `_calls` holds), or NULL when there is no such call; 0,
 * *state NULL, when the assembler or its call is not what C reads (Python must ask); -1 with
 * an exception set. */
int ts_call_state(PyObject *assembler, PyObject *index, PyObject **state);

/* The parameters of a METH_FASTCALL | METH_KEYWORDS method that takes `n` required parameters
 * by position or by name, like `def method(self, a, b)`: out[0..n-1], borrowed. 0 or -1. */
int ts_parse_params(const char *method, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames, const char *const *names, Py_ssize_t n, PyObject **out);

/* Shared helpers of the extension's types (eventpath.c uses them too). */
/* Replace *slot by a new reference to value (NULL allowed). */
void ts_set_ref(PyObject **slot, PyObject *value);
/* The dealloc of a GC heap type whose members `clear` drops (subclass instances included). */
void ts_gc_dealloc(PyObject *op, inquiry clear);
/* The member descriptor `name` of the slotted class `type` (new reference), or NULL with a
 * TypeError when there is none. */
PyObject *ts_slot_of(PyObject *type, PyObject *name);
/* *slot = the interned str `text`. 0 or -1. */
int ts_intern(PyObject **slot, const char *text);
/* Create the type of `spec`, add it to the module as `name` and keep it in *slot. 0 or -1. */
int ts_add_type(PyObject *module, PyType_Spec *spec, const char *name, PyTypeObject **slot);

#endif
