/* The native scanner's C interface, for the other C files of toolstitch._native.
 *
 * A Scanner validates one call's arguments (a JSON object text fed in str fragments) with
 * exactly the decisions of toolstitch.json.tokenizer.ArgumentsTokenizer (no listener), for
 * the common case. Anything else hands over to that Python tokenizer (see scanner.c). */
#ifndef TOOLSTITCH_SCANNER_H
#define TOOLSTITCH_SCANNER_H

#include <Python.h>

/* JSON whitespace (lexicon.WHITESPACE): space, tab, line feed, carriage return. */
static inline int ts_is_json_ws(Py_UCS4 c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* ts_scan results */
#define TS_OPEN 0     /* the fragment was accepted; the object is still open */
#define TS_CLOSED 1   /* the fragment was accepted and closed the top-level object */
#define TS_HANDOVER 2 /* not the common case: nothing was changed; take the Python path */

/* Adds the Scanner type to the module (called by module.c's exec slot). 0 or -1. */
int ts_scanner_init(PyObject *module);

/* Whether obj is a Scanner still on its native path (not handed over). */
int ts_scanner_is_native(PyObject *module, PyObject *obj);

/* 1 if the text a Scanner (native or not) accepted may hold raw surrogate halves, which
 * must be joined before json.loads (lexicon.join_surrogates); 0 if it holds none. */
int ts_scanner_raw_pairs(PyObject *scanner);

/* Scan a non-empty exact str fragment on the native path. TS_OPEN, TS_CLOSED, TS_HANDOVER,
 * or -1 with an exception set (MemoryError). After TS_HANDOVER the scanner stays as it was,
 * so the caller may feed the same fragment through Scanner.feed (which hands over). */
int ts_scan(PyObject *scanner, PyObject *fragment);

/* ts_scan of a fragment its caller knows to be plain string content, valid as it is (no
 * quote, no control character, only complete valid escapes, no lone surrogate: the raw text
 * lane writes nothing else), `length` characters: inside a string it only counts them. */
int ts_scan_string_run(PyObject *scanner, PyObject *fragment, Py_ssize_t length);

#endif
