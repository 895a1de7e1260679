/* The fast feed (fastpath.h): toolstitch.core.assembler's hot path above the scanner, in C.
 *
 * Assembler.feed(delta) is `self._apply(*delta_fields(delta))`; _apply's first branch is the
 * hot path: one more fragment for a call in ACCUMULATING_ARGS, no id or name in the delta,
 * the object not closed. AssemblerBase.feed does exactly that in C for the common case:
 *
 *   read the delta    - an exact dict in the OpenAI wire shape, an exact Delta, or an object
 *                       read the way coerce_delta reads it (the openai SDK's
 *                       ChoiceDeltaToolCall); the checks of delta_fields;
 *   route to the call - self._calls[index];
 *   append and scan   - the call's TextBuffer and its native Scanner (scanner.h);
 *   the events        - [ArgumentsDelta(index=call.index, fragment=arguments)], built like
 *                       assembler._arguments_delta (no dataclass __init__); TS_CLOSED calls
 *                       the Python self._closed(call, fragment, events).
 *
 * Everything else - no call yet, another state, an id or a name, a closed object, schema
 * checks, the argument limit, a Python tokenizer, TS_HANDOVER, a delta of another shape or
 * one the checks refuse - calls the Python method with nothing changed, so the observable
 * result is the Python one. The Python objects this needs (the event class, the states,
 * the Python methods...) are handed over once by configure_fast_path(), called by
 * core/assembler.py; the JOIN_EVERY policy comes from vocab/text.py the same way.
 *
 * State is process-wide (statics): the module is imported once per process. */
#include "fastpath.h"

#include <stddef.h>
#include <structmember.h>

#include "scanner.h"

/* -- process state ------------------------------------------------------------------------ */

/* A slot of a Python class: its member descriptor, with the descriptor's __get__ and __set__. */
typedef struct {
    PyObject *descr;
    descrgetfunc get;
    descrsetfunc set;
} Slot;


typedef struct {
    PyObject *module;             /* toolstitch._native, for ts_scanner_is_native */
    PyTypeObject *text_type;      /* TextBuffer */
    PyTypeObject *call_type;      /* CallBase */
    PyTypeObject *assembler_type; /* AssemblerBase */
    /* The exact classes of the latest call and assembler found to be CallBase and
     * AssemblerBase instances (subclasses, made in Python): asked before PyObject_TypeCheck. */
    PyTypeObject *hot_call_class, *hot_assembler_class;
    /* Handed over by configure_fast_path(); join_every == 0 until then. */
    Py_ssize_t join_every;            /* vocab.text.JOIN_EVERY */
    PyObject *text_snapshot;          /* vocab.text.TextSnapshot */
    PyObject *empty_text;             /* the shared empty TextSnapshot */
    PyObject *accumulating;           /* CallState.ACCUMULATING_ARGS */
    PyTypeObject *arguments_delta;    /* vocab.call_events.ArgumentsDelta */
    Slot delta_fields[2];             /* its index and fragment */
    PyObject *delta_type;             /* core.deltas.Delta */
    PyObject *mapping;                /* collections.abc.Mapping */
    PyObject *not_deltas;             /* the builtin types coerce_delta refuses */
    PyObject *checked_fields;         /* core.deltas.checked_fields */
    PyObject *python_feed;            /* the Python Assembler.feed */
    PyObject *python_feed_arguments;  /* the Python Assembler.feed_arguments */
    /* Interned names. */
    PyObject *s_function, *s_index, *s_id, *s_type, *s_name, *s_arguments;
    PyObject *s_get, *s_apply, *s_closed, *s_empty, *s_feed_arguments;
} FastState;

static FastState fast;

/* Replace *slot by a new reference to value (NULL allowed). */
void ts_set_ref(PyObject **slot, PyObject *value) {
    PyObject *old = *slot;
    Py_XINCREF(value);
    *slot = value;
    Py_XDECREF(old);
}

static int configured(void) {
    if (fast.join_every > 0) {
        return 1;
    }
    PyErr_SetString(PyExc_RuntimeError,
                    "toolstitch._native: configure_fast_path() has not been called");
    return 0;
}

/* -- TextBuffer: vocab.text.ChunkedText in C ------------------------------------------------
 *
 * The same theory of operation: fragments are kept apart in `recent` until JOIN_EVERY of them
 * are joined into one chunk appended to `chunks`; text() joins everything once and caches it
 * as the single chunk of a new list; a snapshot shares the chunk list (only ever appended to,
 * replaced by text(), never changed in place) and copies the recent fragments.
 *
 * One difference of timing, not of policy: the join of a full `recent` happens at the next
 * append, before anything else changes, so that an append after the scanner accepted a
 * fragment cannot fail (see text_reserve).
 *
 * It holds only str objects and a list of str: it cannot be part of a cycle, so it is not a
 * GC type. */

typedef struct {
    PyObject_HEAD
    PyObject *chunks;     /* list of joined chunks (str), or NULL while there is none */
    PyObject **recent;    /* the fragments since the last join: strong references */
    Py_ssize_t count;     /* fragments in recent */
    Py_ssize_t capacity;  /* room in recent: doubles up to join_every */
    Py_ssize_t length;    /* characters appended so far */
} TextBuffer;

static Py_ssize_t chunk_count(const TextBuffer *self) {
    return self->chunks == NULL ? 0 : PyList_Size(self->chunks);
}

static void text_release_recent(TextBuffer *self) {
    Py_ssize_t count = self->count;
    self->count = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_DECREF(self->recent[i]);
    }
}

/* A tuple of the recent fragments: `tuple(recent)`. */
static PyObject *text_recent_tuple(const TextBuffer *self) {
    PyObject *pieces = PyTuple_New(self->count);
    if (pieces == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < self->count; i++) {
        if (PyTuple_SetItem(pieces, i, Py_NewRef(self->recent[i])) < 0) {
            Py_DECREF(pieces);
            return NULL;
        }
    }
    return pieces;
}

/* `self._chunks.append("".join(recent)); recent = []` - nothing changes on failure. */
static int text_join_recent(TextBuffer *self) {
    PyObject *pieces = text_recent_tuple(self);
    if (pieces == NULL) {
        return -1;
    }
    PyObject *chunk = PyUnicode_Join(fast.s_empty, pieces);
    Py_DECREF(pieces);
    if (chunk == NULL) {
        return -1;
    }
    PyObject *chunks = self->chunks;
    if (chunks == NULL && (chunks = PyList_New(0)) == NULL) {
        Py_DECREF(chunk);
        return -1;
    }
    int appended = PyList_Append(chunks, chunk);
    Py_DECREF(chunk);
    if (appended < 0) {
        if (chunks != self->chunks) {
            Py_DECREF(chunks);
        }
        return -1;
    }
    self->chunks = chunks;
    text_release_recent(self);
    return 0;
}

/* Room for one more fragment, so that text_push cannot fail. 0 or -1 (nothing changed). */
static int text_reserve(TextBuffer *self) {
    if (self->count >= fast.join_every && text_join_recent(self) < 0) {
        return -1;
    }
    if (self->count < self->capacity) {
        return 0;
    }
    Py_ssize_t capacity = self->capacity == 0 ? 4 : self->capacity * 2;
    if (capacity > fast.join_every) {
        capacity = fast.join_every;
    }
    PyObject **recent = PyMem_Realloc(self->recent, (size_t)capacity * sizeof(PyObject *));
    if (recent == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    self->recent = recent;
    self->capacity = capacity;
    return 0;
}

/* `recent.append(fragment); self.length = length`, after text_reserve. */
static void text_push(TextBuffer *self, PyObject *fragment, Py_ssize_t length) {
    self->recent[self->count++] = Py_NewRef(fragment);
    self->length = length;
}

static int text_append_checked(TextBuffer *self, PyObject *fragment, Py_ssize_t length) {
    if (text_reserve(self) < 0) {
        return -1;
    }
    text_push(self, fragment, length);
    return 0;
}

static int check_str(PyObject *fragment) {
    if (PyUnicode_Check(fragment)) {
        return 0;
    }
    PyErr_SetString(PyExc_TypeError, "a fragment must be a str");
    return -1;
}

static PyObject *text_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    if (!configured()) {
        return NULL;
    }
    if (PyTuple_Size(args) != 0 || (kwargs != NULL && PyDict_Size(kwargs) != 0)) {
        PyErr_SetString(PyExc_TypeError, "TextBuffer() takes no arguments");
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    return alloc(type, 0); /* zero-filled: no chunks, no recent, length 0 */
}

static void text_dealloc(PyObject *op) {
    TextBuffer *self = (TextBuffer *)op;
    PyTypeObject *type = Py_TYPE(op);
    text_release_recent(self);
    PyMem_Free(self->recent);
    Py_XDECREF(self->chunks);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    tp_free(op);
    Py_DECREF(type);
}

/* ChunkedText.append(fragment) */
static PyObject *text_append(PyObject *op, PyObject *fragment) {
    TextBuffer *self = (TextBuffer *)op;
    if (check_str(fragment) < 0) {
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GetLength(fragment);
    if (n < 0) {
        return NULL;
    }
    if (n > PY_SSIZE_T_MAX - self->length) {
        PyErr_SetString(PyExc_OverflowError, "text too long");
        return NULL;
    }
    if (text_append_checked(self, fragment, self->length + n) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ChunkedText.append_to_length(fragment, length) */
static PyObject *text_append_to_length(PyObject *op, PyObject *const *args, Py_ssize_t nargs) {
    TextBuffer *self = (TextBuffer *)op;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "append_to_length() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    if (check_str(args[0]) < 0) {
        return NULL;
    }
    Py_ssize_t length = PyLong_AsSsize_t(args[1]);
    if (length == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (text_append_checked(self, args[0], length) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ChunkedText.text(): joined at most once per change; cached as the only chunk. */
static PyObject *text_text(PyObject *op, PyObject *unused) {
    (void)unused;
    TextBuffer *self = (TextBuffer *)op;
    Py_ssize_t nchunks = chunk_count(self);
    if (self->count == 0) {
        if (nchunks == 1) {
            return Py_NewRef(PyList_GetItem(self->chunks, 0));
        }
        if (nchunks == 0) {
            return Py_NewRef(fast.s_empty);
        }
    }
    PyObject *pieces = self->chunks == NULL ? PyList_New(0)
                                            : PyList_GetSlice(self->chunks, 0, nchunks);
    if (pieces == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < self->count; i++) {
        if (PyList_Append(pieces, self->recent[i]) < 0) {
            Py_DECREF(pieces);
            return NULL;
        }
    }
    PyObject *text = PyUnicode_Join(fast.s_empty, pieces);
    Py_DECREF(pieces);
    if (text == NULL) {
        return NULL;
    }
    PyObject *chunks = PyList_New(1); /* a new list: snapshots keep the old one unchanged */
    if (chunks == NULL) {
        Py_DECREF(text);
        return NULL;
    }
    PyList_SetItem(chunks, 0, Py_NewRef(text)); /* cannot fail: index 0 of a 1-list */
    Py_XDECREF(self->chunks);
    self->chunks = chunks;
    text_release_recent(self);
    return text;
}

/* ChunkedText.snapshot(): the text as it is now, without joining it. */
static PyObject *text_snapshot(PyObject *op, PyObject *unused) {
    (void)unused;
    TextBuffer *self = (TextBuffer *)op;
    Py_ssize_t nchunks = chunk_count(self);
    if (self->count == 0 && nchunks == 0) {
        return Py_NewRef(fast.empty_text);
    }
    if (self->count == 0 && nchunks == 1) {
        return PyObject_CallFunctionObjArgs(fast.text_snapshot,
                                            PyList_GetItem(self->chunks, 0), NULL);
    }
    PyObject *recent = text_recent_tuple(self);
    if (recent == NULL) {
        return NULL;
    }
    PyObject *count = PyLong_FromSsize_t(nchunks);
    if (count == NULL) {
        Py_DECREF(recent);
        return NULL;
    }
    PyObject *chunks = self->chunks == NULL ? Py_None : self->chunks;
    PyObject *snapshot = PyObject_CallFunctionObjArgs(fast.text_snapshot, Py_None, chunks,
                                                      count, recent, NULL);
    Py_DECREF(count);
    Py_DECREF(recent);
    return snapshot;
}

/* ChunkedText.clear(): the text and its memory, dropped for good. */
static PyObject *text_clear(PyObject *op, PyObject *unused) {
    (void)unused;
    TextBuffer *self = (TextBuffer *)op;
    PyObject *chunks = self->chunks;
    self->chunks = NULL;
    text_release_recent(self);
    PyMem_Free(self->recent);
    self->recent = NULL;
    self->capacity = 0;
    self->length = 0;
    Py_XDECREF(chunks);
    Py_RETURN_NONE;
}

static Py_ssize_t text_len(PyObject *op) { return ((TextBuffer *)op)->length; }

static PyMethodDef text_methods[] = {
    {"append", text_append, METH_O, "Add ``fragment`` at the end."},
    {"append_to_length", (PyCFunction)(void (*)(void))text_append_to_length, METH_FASTCALL,
     "``append(fragment)`` for a caller that has already computed the new ``length``."},
    {"text", text_text, METH_NOARGS,
     "The whole text. Joins at most once per change; the result is cached."},
    {"snapshot", text_snapshot, METH_NOARGS, "The text as it is now, without joining it."},
    {"clear", text_clear, METH_NOARGS, "Forget the text (a discarded call keeps none)."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef text_members[] = {
    {"length", T_PYSSIZET, offsetof(TextBuffer, length), READONLY,
     "The number of characters appended so far."},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot text_slots[] = {
    {Py_tp_doc, "ChunkedText in C: append-only text, O(1) appends and snapshots."},
    {Py_tp_new, text_new},
    {Py_tp_dealloc, text_dealloc},
    {Py_tp_methods, text_methods},
    {Py_tp_members, text_members},
    {Py_sq_length, text_len},
    {0, NULL},
};

static PyType_Spec text_spec = {
    "toolstitch._native.TextBuffer", sizeof(TextBuffer), 0, Py_TPFLAGS_DEFAULT, text_slots,
};

/* -- CallBase: the members of assembler._Call that the hot path reads ------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *buffer;    /* TextBuffer on the native path */
    PyObject *checks;    /* CallChecks | None */
    PyObject *index;     /* int */
    PyObject *state;     /* CallState */
    PyObject *tokenizer; /* the scanner, native or Python */
    char closed;         /* bool: the arguments object has closed */
} CallObject;

static int call_traverse(PyObject *op, visitproc visit, void *arg) {
    CallObject *self = (CallObject *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->buffer);
    Py_VISIT(self->checks);
    Py_VISIT(self->index);
    Py_VISIT(self->state);
    Py_VISIT(self->tokenizer);
    return 0;
}

static int call_clear(PyObject *op) {
    CallObject *self = (CallObject *)op;
    Py_CLEAR(self->buffer);
    Py_CLEAR(self->checks);
    Py_CLEAR(self->index);
    Py_CLEAR(self->state);
    Py_CLEAR(self->tokenizer);
    return 0;
}

/* The dealloc of a GC heap type whose members `clear` drops (subclass instances included:
 * subtype_dealloc leaves the type's reference to the heap base's dealloc). */
void ts_gc_dealloc(PyObject *op, inquiry clear) {
    PyTypeObject *type = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    clear(op);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    tp_free(op);
    Py_DECREF(type);
}

static void call_dealloc(PyObject *op) { ts_gc_dealloc(op, call_clear); }

static PyMemberDef call_members[] = {
    {"buffer", T_OBJECT_EX, offsetof(CallObject, buffer), 0, NULL},
    {"checks", T_OBJECT_EX, offsetof(CallObject, checks), 0, NULL},
    {"closed", T_BOOL, offsetof(CallObject, closed), 0, NULL},
    {"index", T_OBJECT_EX, offsetof(CallObject, index), 0, NULL},
    {"state", T_OBJECT_EX, offsetof(CallObject, state), 0, NULL},
    {"tokenizer", T_OBJECT_EX, offsetof(CallObject, tokenizer), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot call_slots[] = {
    {Py_tp_doc, "The members of a call record that the native hot path reads."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, call_dealloc},
    {Py_tp_traverse, call_traverse},
    {Py_tp_clear, call_clear},
    {Py_tp_members, call_members},
    {0, NULL},
};

static PyType_Spec call_spec = {
    "toolstitch._native.CallBase", sizeof(CallObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, call_slots,
};

/* -- AssemblerBase: the hot members and the C feed ------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *calls;         /* _calls: dict[int, _Call] */
    PyObject *last;          /* _last: the call of the latest delta, or None */
    PyObject *max_chars_obj; /* _max_argument_chars as set */
    Py_ssize_t max_chars;    /* the same as a C number; -1: the Python path decides */
} AsmObject;

static int asm_traverse(PyObject *op, visitproc visit, void *arg) {
    AsmObject *self = (AsmObject *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->calls);
    Py_VISIT(self->last);
    Py_VISIT(self->max_chars_obj);
    return 0;
}

static int asm_clear(PyObject *op) {
    AsmObject *self = (AsmObject *)op;
    Py_CLEAR(self->calls);
    Py_CLEAR(self->last);
    Py_CLEAR(self->max_chars_obj);
    return 0;
}

static void asm_dealloc(PyObject *op) { ts_gc_dealloc(op, asm_clear); }

static PyObject *asm_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    (void)args;
    (void)kwargs;
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    AsmObject *self = (AsmObject *)alloc(type, 0);
    if (self != NULL) {
        self->max_chars = -1;
    }
    return (PyObject *)self;
}

static PyObject *asm_get_max_chars(PyObject *op, void *closure) {
    (void)closure;
    AsmObject *self = (AsmObject *)op;
    if (self->max_chars_obj == NULL) {
        PyErr_SetString(PyExc_AttributeError, "_max_argument_chars");
        return NULL;
    }
    return Py_NewRef(self->max_chars_obj);
}

/* Any value is kept as Python keeps it; only a non-negative int that fits a Py_ssize_t (or a
 * larger one, which no text can reach) lets the C path compare lengths itself. */
static int asm_set_max_chars(PyObject *op, PyObject *value, void *closure) {
    (void)closure;
    AsmObject *self = (AsmObject *)op;
    Py_ssize_t max_chars = -1;
    if (value != NULL && PyLong_Check(value)) {
        int overflow = 0;
        long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (number == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (overflow > 0 || number > (long long)PY_SSIZE_T_MAX) {
            max_chars = PY_SSIZE_T_MAX;
        } else if (overflow == 0 && number >= 0) {
            max_chars = (Py_ssize_t)number;
        }
    }
    ts_set_ref(&self->max_chars_obj, value);
    self->max_chars = max_chars;
    return 0;
}

/* (index, id, type, name, arguments) of a delta: strong references, NULL until read. */
typedef struct {
    PyObject *index, *id, *kind, *name, *arguments;
    int trusted; /* arguments are plain string content, valid as they are (ts_scan_string_run) */
} Fields;

static void fields_clear(Fields *f) {
    Py_CLEAR(f->index);
    Py_CLEAR(f->id);
    Py_CLEAR(f->kind);
    Py_CLEAR(f->name);
    Py_CLEAR(f->arguments);
}

/* `index < 0` for an exact int (fastpath.h). */
int ts_is_negative(PyObject *index) {
    int overflow = 0;
    long long number = PyLong_AsLongLongAndOverflow(index, &overflow);
    return overflow < 0 || (overflow == 0 && number < 0);
}

static int str_or_none(PyObject *value) { return value == Py_None || PyUnicode_CheckExact(value); }

/* delta_fields' check: `(index is None or (type(index) is int and index >= 0)) and
 * (each of the others is None or type(...) is str)`. */
static int fields_valid(const Fields *f) {
    return (f->index == Py_None || (PyLong_CheckExact(f->index) && !ts_is_negative(f->index))) &&
           str_or_none(f->id) && str_or_none(f->kind) && str_or_none(f->name) &&
           str_or_none(f->arguments);
}

/* A non-empty str: the truth of an optional field that passed fields_valid. */
static int non_empty(PyObject *value) {
    return value != Py_None && PyUnicode_GetLength(value) > 0;
}

enum { READ_OK, READ_RAW, READ_CHECK };

/* `mapping.get(key)` of an exact dict, as a new reference (None when absent). */
static PyObject *dict_get(PyObject *mapping, PyObject *key) {
    PyObject *value = PyDict_GetItemWithError(mapping, key);
    if (value == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    return Py_NewRef(value);
}

/* `mapping.get(key)` of an exact dict, as dict_get, counting in *present the keys found. */
static PyObject *dict_get_counted(PyObject *mapping, PyObject *key, Py_ssize_t *present) {
    PyObject *value = PyDict_GetItemWithError(mapping, key);
    if (value == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    *present += 1;
    return Py_NewRef(value);
}

/* delta_fields' dict branch. READ_OK, READ_RAW (the Python path reads the delta) or -1.
 * A dict with a key outside the wire shape (`not (obj.keys() <= WIRE_KEYS and
 * function.keys() <= FUNCTION_KEYS)`) is READ_RAW: the Python feed reports the key. */
static int read_dict(PyObject *delta, Fields *f) {
    /* function = obj.get("function"); if type(function) is not dict: _coerced_fields(obj) */
    Py_ssize_t outer = 0, inner = 0;
    PyObject *function = dict_get_counted(delta, fast.s_function, &outer);
    if (function == NULL) {
        return -1;
    }
    if (!PyDict_CheckExact(function)) {
        Py_DECREF(function);
        return READ_RAW;
    }
    int ok = (f->index = dict_get_counted(delta, fast.s_index, &outer)) != NULL &&
             (f->id = dict_get_counted(delta, fast.s_id, &outer)) != NULL &&
             (f->kind = dict_get_counted(delta, fast.s_type, &outer)) != NULL &&
             (f->name = dict_get_counted(function, fast.s_name, &inner)) != NULL &&
             (f->arguments = dict_get_counted(function, fast.s_arguments, &inner)) != NULL;
    int unread = ok && (PyDict_Size(delta) > outer || PyDict_Size(function) > inner);
    Py_DECREF(function);
    if (!ok) {
        return -1;
    }
    return fields_valid(f) && !unread ? READ_OK : READ_RAW;
}

/* delta_fields' Delta branch: (obj.index, obj.id, obj.type, obj.name, obj.arguments). */
static int read_delta_object(PyObject *delta, Fields *f) {
    int ok = (f->index = PyObject_GetAttr(delta, fast.s_index)) != NULL &&
             (f->id = PyObject_GetAttr(delta, fast.s_id)) != NULL &&
             (f->kind = PyObject_GetAttr(delta, fast.s_type)) != NULL &&
             (f->name = PyObject_GetAttr(delta, fast.s_name)) != NULL &&
             (f->arguments = PyObject_GetAttr(delta, fast.s_arguments)) != NULL;
    if (!ok) {
        return -1;
    }
    return fields_valid(f) ? READ_OK : READ_RAW;
}

/* `getattr(obj, name, None)`: a new reference, NULL with an exception but AttributeError. */
static PyObject *getattr_or_none(PyObject *obj, PyObject *name) {
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        return Py_NewRef(Py_None);
    }
    return value;
}

/* `function.get(key)` of a Mapping (dict.get itself for an exact dict). */
static PyObject *mapping_get(PyObject *mapping, PyObject *key) {
    if (PyDict_CheckExact(mapping)) {
        return dict_get(mapping, key);
    }
    return PyObject_CallMethodObjArgs(mapping, fast.s_get, key, NULL);
}

/* _from_object's name and arguments, from `function` (None, a Mapping or an object). */
static int read_function(PyObject *obj, PyObject *function, Fields *f) {
    if (function == Py_None) {
        f->name = getattr_or_none(obj, fast.s_name);
        f->arguments = f->name == NULL ? NULL : getattr_or_none(obj, fast.s_arguments);
        return f->arguments == NULL ? -1 : 0;
    }
    int is_mapping = PyObject_IsInstance(function, fast.mapping);
    if (is_mapping < 0) {
        return -1;
    }
    if (is_mapping) {
        f->name = mapping_get(function, fast.s_name);
        f->arguments = f->name == NULL ? NULL : mapping_get(function, fast.s_arguments);
    } else {
        f->name = getattr_or_none(function, fast.s_name);
        f->arguments = f->name == NULL ? NULL : getattr_or_none(function, fast.s_arguments);
    }
    return f->arguments == NULL ? -1 : 0;
}

/* coerce_delta's object branch (the openai SDK's ChoiceDeltaToolCall): the same checks and
 * the same attribute reads in the same order. READ_OK, READ_CHECK (the fields need
 * deltas.checked_fields), READ_RAW (not an object delta: the Python path reads it) or -1. */
static int read_object(PyObject *obj, Fields *f) {
    /* elif isinstance(obj, Mapping): ...; elif isinstance(obj, (str, ...)) or obj is None:
     * raise; elif isinstance(obj, Delta) or any(hasattr(obj, attr) ...): - the Python path
     * takes everything but an object that has an `index` attribute, the first it tries. */
    if (obj == Py_None) {
        return READ_RAW;
    }
    int refused = PyObject_IsInstance(obj, fast.mapping);
    if (refused == 0) {
        refused = PyObject_IsInstance(obj, fast.not_deltas);
    }
    if (refused == 0) {
        refused = PyObject_IsInstance(obj, fast.delta_type);
    }
    if (refused != 0) {
        return refused < 0 ? -1 : READ_RAW;
    }
    PyObject *probe = PyObject_GetAttr(obj, fast.s_index); /* hasattr(obj, "index") */
    if (probe == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return -1;
        }
        PyErr_Clear();
        return READ_RAW;
    }
    Py_DECREF(probe);
    /* _from_object: function, its name and arguments, then index, id, type. */
    PyObject *function = getattr_or_none(obj, fast.s_function);
    if (function == NULL) {
        return -1;
    }
    int read = read_function(obj, function, f);
    Py_DECREF(function);
    if (read < 0 || (f->index = getattr_or_none(obj, fast.s_index)) == NULL ||
        (f->id = getattr_or_none(obj, fast.s_id)) == NULL ||
        (f->kind = getattr_or_none(obj, fast.s_type)) == NULL) {
        return -1;
    }
    return fields_valid(f) ? READ_OK : READ_CHECK;
}

/* delta_fields(delta), the shapes it takes without coerce_delta, plus the SDK object. */
static int read_fields(PyObject *delta, Fields *f) {
    if (PyDict_CheckExact(delta)) {
        return read_dict(delta, f);
    }
    if (Py_IS_TYPE(delta, (PyTypeObject *)fast.delta_type)) {
        return read_delta_object(delta, f);
    }
    return read_object(delta, f);
}

/* -- slots: the fields of the Python classes that C reads and sets ------------------------- */

enum { CALL_NAME, CALL_ID, CALL_TYPE, CALL_RESULT, CALL_READY_LENGTH, CALL_TRAILING, CALL_SLOTS };
enum { ASM_TOOLS, ASM_NOTES, ASM_OPEN, ASM_BY_ID, ASM_LISTENER, ASM_LIMITS, ASM_SLOTS };
enum { TOOL_CALL_FIELDS = 8 };

static const char *const call_slot_names[CALL_SLOTS] = {
    "name", "id", "type", "result", "ready_length", "trailing_offset"};
static const char *const asm_slot_names[ASM_SLOTS] = {"_tools", "_notes",         "_open",
                                                       "_by_id", "_json_listener", "_limits"};
static const char *const tool_call_names[TOOL_CALL_FIELDS] = {
    "index", "id", "type", "name", "arguments", "parsed_arguments", "signature", "caller"};

typedef struct {
    int configured;
    Slot call[CALL_SLOTS];        /* the native call record's Python slots */
    Slot assembler[ASM_SLOTS];    /* the native assembler's */
    PyTypeObject *tool_call;      /* vocab.call_events.ToolCall */
    Slot tool_call_fields[TOOL_CALL_FIELDS];
    PyTypeObject *call_ready;     /* vocab.call_events.CallReady */
    Slot ready_call;              /* its `call` */
    PyObject *complete;           /* next_state(ACCUMULATING_ARGS, "complete") */
    PyObject *scan_once;          /* lexicon.scan_value: (text, start) -> (value, end) */
    PyObject *default_type;       /* the type of a call that named none */
    PyObject *is_ready;           /* core.machine.is_ready: the readiness rule */
    int verdicts[8];              /* its answers (rule_verdict) */
    PyObject *named;              /* CallState.ACCUMULATING_NAME */
    PyObject *named_then;         /* where a call in it goes with its first fragment */
} ReadyState;

static ReadyState ready;

/* The member descriptor `name` of the slotted class `type` (new reference), or NULL with a
 * TypeError: the class has no such attribute, or it is no descriptor with __get__ and
 * __set__. */
PyObject *ts_slot_of(PyObject *type, PyObject *name) {
    PyObject *descr = PyObject_GetAttr(type, name);
    if (descr == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%R has no slot %R", type, name);
    } else if (descr != NULL && (PyType_GetSlot(Py_TYPE(descr), Py_tp_descr_get) == NULL ||
                                 PyType_GetSlot(Py_TYPE(descr), Py_tp_descr_set) == NULL)) {
        PyErr_Format(PyExc_TypeError, "%R of %R is not a slot", name, type);
        Py_CLEAR(descr);
    }
    return descr;
}

/* slot->descr = the slot `name` of `type` (ts_slot_of), with its __get__ and __set__. */
static int slot_init(Slot *slot, PyObject *type, const char *name) {
    PyObject *key = PyUnicode_InternFromString(name);
    PyObject *descr = key == NULL ? NULL : ts_slot_of(type, key);
    Py_XDECREF(key);
    if (descr == NULL) {
        return -1;
    }
    ts_set_ref(&slot->descr, descr);
    Py_DECREF(descr);
    slot->get = (descrgetfunc)PyType_GetSlot(Py_TYPE(slot->descr), Py_tp_descr_get);
    slot->set = (descrsetfunc)PyType_GetSlot(Py_TYPE(slot->descr), Py_tp_descr_set);
    return 0;
}

static int slots_init(Slot *slots, PyObject *type, const char *const *names, int n) {
    for (int i = 0; i < n; i++) {
        if (slot_init(&slots[i], type, names[i]) < 0) {
            return -1;
        }
    }
    return 0;
}

/* obj.<slot> (new reference), or NULL with an exception set. */
static PyObject *slot_get(const Slot *slot, PyObject *obj) {
    return slot->get(slot->descr, obj, (PyObject *)Py_TYPE(obj));
}

/* A new instance of a frozen slotted event class, its fields set through the slots (as
 * assembler._arguments_delta, _tool_call and _call_ready build them); NULL with an exception
 * set. */
static PyObject *new_event(PyTypeObject *type, const Slot *slots, PyObject *const *values,
                           int n) {
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    PyObject *event = alloc(type, 0);
    if (event == NULL) {
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (slots[i].set(slots[i].descr, event, values[i]) < 0) {
            Py_DECREF(event);
            return NULL;
        }
    }
    return event;
}

/* `ArgumentsDelta(index=index, fragment=fragment)` as assembler._arguments_delta builds it:
 * object.__new__ and the slot descriptors' __set__, without the dataclass __init__. */
static PyObject *new_arguments_delta(PyObject *index, PyObject *fragment) {
    PyObject *values[2] = {index, fragment};
    return new_event(fast.arguments_delta, fast.delta_fields, values, 2);
}

/* self._apply(index, call_id, kind, name, arguments): the Python path. */
static PyObject *python_apply(PyObject *self, const Fields *f) {
    return PyObject_CallMethodObjArgs(self, fast.s_apply, f->index, f->id, f->kind, f->name,
                                      f->arguments, NULL);
}

/* Whether `call` in state ACCUMULATING_NAME may take its first fragment on the C path: what
 * _apply_slow does then (`kind` None, so no type to set; _take_arguments with no declared
 * tools, so no name check and no schema checks to start) is the hot path after one state
 * move, the one configure_ready_path() hands over (`first_moves`). 1, 0 or -1. */
static int first_fragment(AsmObject *self, const CallObject *call, const Fields *f) {
    if (!ready.configured || call->state != ready.named || f->kind != Py_None) {
        return 0;
    }
    PyObject *tools = slot_get(&ready.assembler[ASM_TOOLS], (PyObject *)self);
    if (tools == NULL) {
        return -1;
    }
    Py_DECREF(tools);
    return tools == Py_None;
}

/* The hot path's condition (assembler._apply), and what the C path needs besides:
 *   call is not None and arguments and call.state is _ACCUMULATING_ARGS
 *   and not (call_id or name or call.closed)
 * + no schema checks, a TextBuffer, a Scanner still on its native path. A call still in
 * ACCUMULATING_NAME whose first fragment this is (first_fragment) qualifies too: *first is
 * then 1, and the caller moves it to `ready.named_then` once the scan has taken the fragment.
 * 1, 0 or -1. */
static int is_hot(AsmObject *self, PyObject *call_obj, const Fields *f, int *first) {
    *first = 0;
    if (!Py_IS_TYPE(call_obj, fast.hot_call_class)) {
        if (!PyObject_TypeCheck(call_obj, fast.call_type)) {
            return 0;
        }
        ts_set_ref((PyObject **)&fast.hot_call_class, (PyObject *)Py_TYPE(call_obj));
    }
    CallObject *call = (CallObject *)call_obj;
    int usable = non_empty(f->arguments) && !non_empty(f->id) && !non_empty(f->name) &&
                 !call->closed && call->checks == Py_None && call->buffer != NULL &&
                 Py_IS_TYPE(call->buffer, fast.text_type) && call->tokenizer != NULL &&
                 ts_scanner_is_native(fast.module, call->tokenizer) == 1;
    if (!usable || call->state == fast.accumulating) {
        return usable;
    }
    *first = first_fragment(self, call, f);
    return *first;
}

/* -- the ready path: the hot close of a call that is ready ----------------------------------
 *
 * When a fragment on the hot path closes the arguments object, _apply calls
 * `self._closed(call, fragment, events)`: _mark_closed, then _settle_closed, which readies the
 * call if the readiness rule (core/machine.py is_ready) says so. ready_closed does the same in
 * C when the rule - called, not restated: configure_ready_path() hands C the function - says
 * ready and nothing else is due: a native scanner (an exact close: ready_length drops the
 * fragment's trailing JSON whitespace), an exact str name and id, no declared tools, no
 * notes, no raw surrogate halves to join, a text the strict decoder loads whole. The call then gets
 * what assembler._ready gives it (its ToolCall, COMPLETE, one call fewer open) and the
 * events a CallReady. In every other case it changes nothing and the Python method decides,
 * so the result and its errors are the Python ones. The objects it needs come from
 * configure_ready_path(), which core/assembler.py calls once the classes exist. */

/* The characters of JSON whitespace at the end of `fragment`. */
static Py_ssize_t trailing_whitespace(PyObject *fragment) {
    Py_ssize_t n = PyUnicode_GetLength(fragment), end = n;
    while (end > 0) {
        Py_UCS4 c = PyUnicode_ReadChar(fragment, end - 1);
        if (!ts_is_json_ws(c)) {
            break;
        }
        end--;
    }
    return n - end;
}

/* Where the object starts in `text` (after leading JSON whitespace), or -1 if it does not
 * start with '{' there. */
static Py_ssize_t object_start(PyObject *text) {
    Py_ssize_t n = PyUnicode_GetLength(text);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_ReadChar(text, i);
        if (c == '{') {
            return i;
        }
        if (!ts_is_json_ws(c)) {
            return -1;
        }
    }
    return -1;
}

/* The value of `arguments`, loaded whole by the strict decoder: a new reference; NULL with no
 * exception when it does not load (the Python path reports that); NULL with one for an
 * error that is not about the text. */
static PyObject *load_whole(PyObject *arguments) {
    Py_ssize_t start = object_start(arguments);
    if (start < 0) {
        return NULL;
    }
    PyObject *idx = PyLong_FromSsize_t(start);
    if (idx == NULL) {
        return NULL;
    }
    PyObject *pair = PyObject_CallFunctionObjArgs(ready.scan_once, arguments, idx, NULL);
    Py_DECREF(idx);
    if (pair == NULL) {
        if (PyErr_ExceptionMatches(PyExc_StopIteration) ||
            PyErr_ExceptionMatches(PyExc_ValueError) ||
            PyErr_ExceptionMatches(PyExc_RecursionError)) {
            PyErr_Clear();
        }
        return NULL;
    }
    PyObject *value = NULL;
    if (PyTuple_CheckExact(pair) && PyTuple_Size(pair) == 2) {
        PyObject *end = PyTuple_GetItem(pair, 1);
        if (PyLong_CheckExact(end) && PyLong_AsSsize_t(end) == PyUnicode_GetLength(arguments)) {
            value = Py_NewRef(PyTuple_GetItem(pair, 0));
        }
    }
    Py_DECREF(pair);
    return value;
}

/* core.machine.is_ready(closed, named, has_id): the readiness rule, asked, not restated. It
 * is a function of three booleans: configure_ready_path() asks it all eight questions once
 * and keeps the answers (ready.verdicts, indexed closed*4 + named*2 + has_id). 1 or 0. */
static int rule_verdict(int closed, int named, int has_id) {
    return ready.verdicts[(closed ? 4 : 0) + (named ? 2 : 0) + (has_id ? 1 : 0)];
}

/* is_ready(True, bool(name), id is not None). 1, 0 or -1. */
static int rule_says_ready(PyObject *name, PyObject *id) {
    int named = PyObject_IsTrue(name);
    if (named < 0) {
        return -1;
    }
    return rule_verdict(1, named, id != Py_None);
}

/* The eight answers of is_ready into ready.verdicts: 0 or -1. */
static int ask_the_rule(PyObject *is_ready) {
    for (int question = 0; question < 8; question++) {
        PyObject *verdict = PyObject_CallFunctionObjArgs(
            is_ready, question & 4 ? Py_True : Py_False, question & 2 ? Py_True : Py_False,
            question & 1 ? Py_True : Py_False, NULL);
        int answer = verdict == NULL ? -1 : PyObject_IsTrue(verdict);
        Py_XDECREF(verdict);
        if (answer < 0) {
            return -1;
        }
        ready.verdicts[question] = answer;
    }
    return 0;
}

/* Whether C may build the call's ToolCall itself: the rule says ready, and what it is built
 * from is as _ready expects it (exact str name and id, a type None or an exact str) with
 * nothing else due (no tools, no notes, no trailing-text offset). 1, 0 or -1. */
static int ready_in_c(AsmObject *self, PyObject *call, PyObject *name, PyObject *id,
                      PyObject *kind) {
    if (!PyUnicode_CheckExact(name) || !PyUnicode_CheckExact(id) ||
        !(kind == Py_None || PyUnicode_CheckExact(kind))) {
        return 0;
    }
    int ready_now = rule_says_ready(name, id);
    if (ready_now <= 0) {
        return ready_now;
    }
    PyObject *tools = slot_get(&ready.assembler[ASM_TOOLS], (PyObject *)self);
    PyObject *notes = tools == NULL ? NULL : slot_get(&ready.assembler[ASM_NOTES], (PyObject *)self);
    PyObject *trailing = notes == NULL ? NULL : slot_get(&ready.call[CALL_TRAILING], call);
    int usable = trailing != NULL && tools == Py_None && PyDict_CheckExact(notes) &&
                 PyDict_Size(notes) == 0 && trailing == Py_None;
    int failed = trailing == NULL;
    Py_XDECREF(tools);
    Py_XDECREF(notes);
    Py_XDECREF(trailing);
    return failed ? -1 : usable;
}

/* The call's name, id and type (`call.type or "function"`) in out[0..2] (new references)
 * when C may ready it: 1; 0 when the Python path must decide; -1. */
static int ready_fields(AsmObject *self, PyObject *call, PyObject **out) {
    for (int i = 0; i <= CALL_TYPE; i++) {
        if ((out[i] = slot_get(&ready.call[i], call)) == NULL) {
            for (int j = 0; j < i; j++) {
                Py_CLEAR(out[j]);
            }
            return -1;
        }
    }
    PyObject *kind = out[CALL_TYPE];
    int usable = ready_in_c(self, call, out[CALL_NAME], out[CALL_ID], kind);
    if (usable == 1 && (kind == Py_None || PyUnicode_GetLength(kind) == 0)) {
        ts_set_ref(&out[CALL_TYPE], ready.default_type);
    }
    if (usable != 1) {
        for (int i = 0; i <= CALL_TYPE; i++) {
            Py_CLEAR(out[i]);
        }
    }
    return usable;
}

/* The CallReady of `call` with `arguments` and their `value` loaded, its ToolCall in *result
 * (new references); NULL with an exception set. fields: name, id, type. */
static PyObject *ready_event(CallObject *call, PyObject *const *fields, PyObject *arguments,
                             PyObject *value, PyObject **result) {
    PyObject *values[TOOL_CALL_FIELDS] = {call->index, fields[CALL_ID], fields[CALL_TYPE],
                                          fields[CALL_NAME], arguments, value, Py_None,
                                          Py_None};
    *result = new_event(ready.tool_call, ready.tool_call_fields, values, TOOL_CALL_FIELDS);
    if (*result == NULL) {
        return NULL;
    }
    PyObject *event = new_event(ready.call_ready, &ready.ready_call, result, 1);
    if (event == NULL) {
        Py_CLEAR(*result);
    }
    return event;
}

/* _open - 1 as a new int, or NULL (an exception set, or none: the Python path decides). */
static PyObject *one_fewer_open(AsmObject *self) {
    PyObject *open = slot_get(&ready.assembler[ASM_OPEN], (PyObject *)self);
    if (open == NULL) {
        return NULL;
    }
    Py_ssize_t count = PyLong_CheckExact(open) ? PyLong_AsSsize_t(open) : -1;
    Py_DECREF(open);
    if (count < 1) { /* not an exact int, or not a count of open calls this one is part of */
        PyErr_Clear();
        return NULL;
    }
    return PyLong_FromSsize_t(count - 1);
}

/* Everything that can fail, before anything changes: the call's text, its value, the events
 * and the new counts. 1 with the new references in `made`; 0 (the Python path decides); -1. */
enum { MADE_ARGUMENTS, MADE_VALUE, MADE_RESULT, MADE_EVENT, MADE_LENGTH, MADE_OPEN, MADE };

static int ready_prepare(AsmObject *self, CallObject *call, PyObject *fragment,
                         PyObject *const *fields, PyObject **made) {
    TextBuffer *buffer = (TextBuffer *)call->buffer;
    Py_ssize_t length = buffer->length - trailing_whitespace(fragment);
    PyObject *text = text_text(call->buffer, NULL);
    if (text == NULL) {
        return -1;
    }
    made[MADE_ARGUMENTS] = PyUnicode_Substring(text, 0, length);
    Py_DECREF(text);
    if (made[MADE_ARGUMENTS] == NULL) {
        return -1;
    }
    made[MADE_VALUE] = load_whole(made[MADE_ARGUMENTS]);
    if (made[MADE_VALUE] == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    made[MADE_EVENT] = ready_event(call, fields, made[MADE_ARGUMENTS], made[MADE_VALUE],
                                   &made[MADE_RESULT]);
    if (made[MADE_EVENT] == NULL || (made[MADE_LENGTH] = PyLong_FromSsize_t(length)) == NULL) {
        return -1;
    }
    made[MADE_OPEN] = one_fewer_open(self);
    return made[MADE_OPEN] != NULL ? 1 : (PyErr_Occurred() ? -1 : 0);
}

/* `self._closed(call, fragment, events)` in C when the call is ready and nothing else is due:
 * 1 done; 0 nothing changed, the Python method must; -1 with an exception set (nothing
 * changed). */
static int ready_closed(AsmObject *self, CallObject *call, PyObject *fragment,
                        PyObject *events) {
    if (!ready.configured || ts_scanner_raw_pairs(call->tokenizer)) {
        return 0;
    }
    PyObject *fields[CALL_TYPE + 1] = {NULL};
    int usable = ready_fields(self, (PyObject *)call, fields);
    if (usable <= 0) {
        return usable;
    }
    PyObject *made[MADE] = {NULL};
    int done = ready_prepare(self, call, fragment, fields, made);
    if (done == 1 && PyList_Append(events, made[MADE_EVENT]) < 0) {
        done = -1;
    }
    if (done == 1) {
        /* _mark_closed, then _ready: nothing here can fail (slots set to existing values). */
        PyObject *obj = (PyObject *)call;
        call->closed = 1;
        ready.call[CALL_READY_LENGTH].set(ready.call[CALL_READY_LENGTH].descr, obj,
                                          made[MADE_LENGTH]);
        ready.call[CALL_RESULT].set(ready.call[CALL_RESULT].descr, obj, made[MADE_RESULT]);
        ts_set_ref(&call->state, ready.complete);
        ready.assembler[ASM_OPEN].set(ready.assembler[ASM_OPEN].descr, (PyObject *)self,
                                      made[MADE_OPEN]);
    }
    for (int i = 0; i < MADE; i++) {
        Py_XDECREF(made[i]);
    }
    for (int i = 0; i <= CALL_TYPE; i++) {
        Py_XDECREF(fields[i]);
    }
    return done;
}

/* `self._last = call` */
static void set_last(AsmObject *self, PyObject *call) { ts_set_ref(&self->last, call); }

/* -- the start path: a new call named at once ----------------------------------------------
 *
 * The first delta of a call index not seen yet usually carries its id and its whole name and
 * no arguments (OpenAI's header delta; the wire-shaped start of an Anthropic tool block).
 * _apply_slow then runs _route (a new record: its TextBuffer, its tokenizer from
 * make_tokenizer, CallStarted), _take_id (the id, `_by_id`, the moves of on_first_id) and
 * _take_name. start_call does the same in C when nothing else is due: an exact int index,
 * exact non-empty str id and name within max_id_chars and max_name_chars, a type None or an
 * exact str, no arguments text, no declared tools and no JSON listener, fewer than max_calls
 * calls (so `_discarded_overflow` is empty: an index is put there only once max_calls calls
 * exist, and calls are never removed but by reset(), which empties it too), and the
 * readiness rule not saying ready for an open call. It asks what it does not restate: the
 * tokenizer is make_tokenizer's, the record is built by the call class itself (its __init__
 * sets the fields), the state after the id is the machine's (configure_start_path() hands it
 * over as data), and is_ready's answer is the one asked at configuration (rule_verdict).
 * Everything that can fail comes before the first change; in every other case nothing
 * changes and the Python method decides. */

enum { STARTED_FIELDS = 3 };
static const char *const started_names[STARTED_FIELDS] = {"index", "id", "name"};

typedef struct {
    int configured;
    PyObject *assembler_class;  /* the native Assembler: its exact instances only */
    PyObject *call_class;       /* its _call_class */
    PyObject *make_tokenizer;   /* json.tokenizer.make_tokenizer */
    PyObject *tokenizer_kwargs; /* ("max_depth", "max_number_digits", "text") */
    PyObject *no_args;          /* () */
    PyTypeObject *call_started; /* vocab.call_events.CallStarted */
    Slot started_fields[STARTED_FIELDS];
    PyObject *awaiting_id; /* CallState.AWAITING_ID, a new record's state */
    PyObject *named;       /* its state after the first id with no arguments before it */
    PyObject *s_max_calls, *s_max_id, *s_max_name, *s_max_depth, *s_max_digits, *s_text;
} StartState;

static StartState start;

/* `len(value) <= limits.<name>` for an exact str and an exact int limit: 1, 0 (not so, or
 * not an exact int: the Python path decides) or -1. */
static int within(PyObject *limits, PyObject *name, Py_ssize_t length) {
    PyObject *bound = PyObject_GetAttr(limits, name);
    if (bound == NULL) {
        return -1;
    }
    int overflow = 0;
    long long number = PyLong_CheckExact(bound) ? PyLong_AsLongLongAndOverflow(bound, &overflow)
                                                : -1;
    Py_DECREF(bound);
    if (number == -1 && PyErr_Occurred()) {
        return -1;
    }
    return overflow > 0 || (overflow == 0 && number >= 0 && (long long)length <= number);
}

/* Whether the delta `f` of a call index not seen yet may start its call on the C path, by
 * what it holds (see above): 1 or 0. */
static int start_shape(const Fields *f) {
    return start.configured && ready.configured && PyLong_CheckExact(f->index) &&
           !ts_is_negative(f->index) && f->id != Py_None && PyUnicode_CheckExact(f->id) &&
           PyUnicode_GetLength(f->id) > 0 && f->name != Py_None && PyUnicode_CheckExact(f->name) &&
           PyUnicode_GetLength(f->name) > 0 && (f->kind == Py_None || PyUnicode_CheckExact(f->kind)) &&
           (f->arguments == Py_None ||
            (PyUnicode_CheckExact(f->arguments) && PyUnicode_GetLength(f->arguments) == 0));
}

/* No tools, no listener, fewer than max_calls calls and the id and name within their limits;
 * *limits the assembler's Limits (a new reference) when 1. 1, 0 or -1. */
static int start_allowed(AsmObject *self, const Fields *f, PyObject **limits) {
    PyObject *obj = (PyObject *)self;
    PyObject *tools = slot_get(&ready.assembler[ASM_TOOLS], obj);
    PyObject *listener = tools == NULL ? NULL : slot_get(&ready.assembler[ASM_LISTENER], obj);
    int usable = listener != NULL && tools == Py_None && listener == Py_None &&
                 PyDict_CheckExact(self->calls);
    int failed = listener == NULL;
    Py_XDECREF(tools);
    Py_XDECREF(listener);
    if (!usable) {
        return failed ? -1 : 0;
    }
    *limits = slot_get(&ready.assembler[ASM_LIMITS], obj);
    if (*limits == NULL) {
        return -1;
    }
    int ok = within(*limits, start.s_max_calls, PyDict_Size(self->calls) + 1);
    if (ok == 1) {
        ok = within(*limits, start.s_max_id, PyUnicode_GetLength(f->id));
    }
    if (ok == 1) {
        ok = within(*limits, start.s_max_name, PyUnicode_GetLength(f->name));
    }
    if (ok != 1) {
        Py_CLEAR(*limits);
    }
    return ok;
}

/* make_tokenizer(max_depth=limits.max_depth, max_number_digits=limits.max_number_digits,
 * text=buffer.text): a new reference, or NULL with an exception set. */
static PyObject *new_tokenizer(PyObject *limits, PyObject *buffer) {
    PyObject *values[3] = {NULL, NULL, NULL};
    PyObject *kwargs = PyDict_New(), *tokenizer = NULL;
    int ok = kwargs != NULL && (values[0] = PyObject_GetAttr(limits, start.s_max_depth)) != NULL &&
             (values[1] = PyObject_GetAttr(limits, start.s_max_digits)) != NULL &&
             (values[2] = PyObject_GetAttr(buffer, start.s_text)) != NULL;
    for (int i = 0; ok && i < 3; i++) {
        ok = PyDict_SetItem(kwargs, PyTuple_GetItem(start.tokenizer_kwargs, i), values[i]) == 0;
    }
    if (ok) {
        tokenizer = PyObject_Call(start.make_tokenizer, start.no_args, kwargs);
    }
    for (int i = 0; i < 3; i++) {
        Py_XDECREF(values[i]);
    }
    Py_XDECREF(kwargs);
    return tokenizer;
}

/* The new record: `self._call_class(index, tokenizer, len(self._calls), buffer)`. */
static PyObject *new_record(AsmObject *self, PyObject *index, PyObject *limits) {
    PyObject *buffer = PyObject_CallNoArgs((PyObject *)fast.text_type);
    PyObject *tokenizer = buffer == NULL ? NULL : new_tokenizer(limits, buffer);
    PyObject *position = tokenizer == NULL ? NULL : PyLong_FromSsize_t(PyDict_Size(self->calls));
    PyObject *call = NULL;
    if (position != NULL) {
        call = PyObject_CallFunctionObjArgs(start.call_class, index, tokenizer, position, buffer,
                                            NULL);
    }
    Py_XDECREF(buffer);
    Py_XDECREF(tokenizer);
    Py_XDECREF(position);
    if (call != NULL && (!Py_IS_TYPE(call, (PyTypeObject *)start.call_class) ||
                         ((CallObject *)call)->state != start.awaiting_id)) {
        PyErr_SetString(PyExc_TypeError, "the call class made a record C cannot start");
        Py_CLEAR(call);
    }
    return call;
}

/* What start_call makes before it changes anything: the record, the event list with its
 * CallStarted, and `_open + 1`. 1 (new references in made), 0 (the Python path decides: the
 * rule says ready, or `_open` is not an exact int) or -1. */
enum { BORN_CALL, BORN_EVENTS, BORN_OPEN, BORN };

static int start_prepare(AsmObject *self, const Fields *f, PyObject *limits, PyObject **made) {
    if (rule_verdict(0, 1, 1)) {
        return 0; /* an open call the rule calls ready: not for C */
    }
    PyObject *open = slot_get(&ready.assembler[ASM_OPEN], (PyObject *)self);
    if (open == NULL) {
        return -1;
    }
    Py_ssize_t count = PyLong_CheckExact(open) ? PyLong_AsSsize_t(open) : -1;
    Py_DECREF(open);
    if (count < 0 || count == PY_SSIZE_T_MAX) { /* not a count C can add one to */
        PyErr_Clear();
        return 0;
    }
    if ((made[BORN_OPEN] = PyLong_FromSsize_t(count + 1)) == NULL) {
        return -1;
    }
    PyObject *values[STARTED_FIELDS] = {f->index, f->id, f->name};
    PyObject *event = new_event(start.call_started, start.started_fields, values, STARTED_FIELDS);
    made[BORN_EVENTS] = event == NULL ? NULL : PyList_New(1);
    if (made[BORN_EVENTS] == NULL) {
        Py_XDECREF(event);
        return -1;
    }
    PyList_SetItem(made[BORN_EVENTS], 0, event); /* steals event */
    made[BORN_CALL] = new_record(self, f->index, limits);
    return made[BORN_CALL] == NULL ? -1 : 1;
}

/* The changes, in _route's, _take_id's and _take_name's order. Only the two dict inserts can
 * fail (no memory), as they can in Python. */
static int start_commit(AsmObject *self, const Fields *f, PyObject *const *made) {
    PyObject *call = made[BORN_CALL], *obj = (PyObject *)self;
    if (PyDict_SetItem(self->calls, f->index, call) < 0) { /* self._calls[index] = call */
        return -1;
    }
    ready.assembler[ASM_OPEN].set(ready.assembler[ASM_OPEN].descr, obj, made[BORN_OPEN]);
    set_last(self, call);
    if (f->kind != Py_None) { /* the record is new: its type is None */
        ready.call[CALL_TYPE].set(ready.call[CALL_TYPE].descr, call, f->kind);
    }
    ready.call[CALL_ID].set(ready.call[CALL_ID].descr, call, f->id);
    /* _by_id.setdefault(id, call): the Python way to fail there (MemoryError) leaves as much */
    PyObject *by_id = slot_get(&ready.assembler[ASM_BY_ID], obj);
    int kept = by_id != NULL && PyDict_CheckExact(by_id);
    if (kept && PyDict_GetItemWithError(by_id, f->id) == NULL) {
        kept = !PyErr_Occurred() && PyDict_SetItem(by_id, f->id, call) == 0;
    }
    if (by_id != NULL && !PyDict_CheckExact(by_id)) {
        PyErr_SetString(PyExc_TypeError, "_by_id must be a dict");
    }
    Py_XDECREF(by_id);
    ts_set_ref(&((CallObject *)call)->state, start.named);
    ready.call[CALL_NAME].set(ready.call[CALL_NAME].descr, call, f->name); /* "" + name */
    return kept ? 1 : -1;
}

/* The start path for the delta `f` of a call index not in `_calls`: 1 and *out (the events)
 * when C started the call, 0 when the Python path must (nothing changed), -1. */
static int start_call(AsmObject *self, const Fields *f, PyObject **out) {
    if (!start_shape(f) || (PyObject *)Py_TYPE(self) != start.assembler_class) {
        return 0;
    }
    PyObject *limits = NULL;
    int done = start_allowed(self, f, &limits);
    PyObject *made[BORN] = {NULL, NULL, NULL};
    if (done == 1) {
        done = start_prepare(self, f, limits, made);
    }
    if (done == 1) {
        done = start_commit(self, f, made);
    }
    if (done == 1) {
        *out = Py_NewRef(made[BORN_EVENTS]);
    }
    Py_XDECREF(limits);
    for (int i = 0; i < BORN; i++) {
        Py_XDECREF(made[i]);
    }
    return done;
}

/* self._closed(call, fragment, events): 1, or -1 with an exception set. */
static int python_closed(AsmObject *self, PyObject *call, PyObject *fragment, PyObject *events) {
    PyObject *done =
        PyObject_CallMethodObjArgs((PyObject *)self, fast.s_closed, call, fragment, events, NULL);
    if (done == NULL) {
        return -1;
    }
    Py_DECREF(done);
    return 1;
}

/* The hot path of _apply for `call` (a strong reference held by the caller): 1 and *out (the
 * events) when C took the fragment, 0 when the Python path must (nothing changed), -1. */
static int feed_hot(AsmObject *self, PyObject *call_obj, const Fields *f, PyObject **out) {
    int first;
    int hot = is_hot(self, call_obj, f, &first);
    if (hot <= 0) {
        return hot;
    }
    CallObject *call = (CallObject *)call_obj;
    TextBuffer *buffer = (TextBuffer *)call->buffer;
    /* length = buffer.length + len(arguments); if length <= self._max_argument_chars: */
    Py_ssize_t n = PyUnicode_GetLength(f->arguments);
    if (n > self->max_chars - buffer->length) {
        return 0;
    }
    Py_ssize_t length = buffer->length + n;
    /* All that can fail comes before the scan, which advances the scanner. */
    if (text_reserve(buffer) < 0) {
        return -1;
    }
    PyObject *events = PyList_New(1);
    if (events == NULL) {
        return -1;
    }
    PyObject *event = new_arguments_delta(call->index, f->arguments);
    if (event == NULL) {
        Py_DECREF(events);
        return -1;
    }
    PyList_SetItem(events, 0, event); /* steals event; cannot fail: index 0 of a 1-list */
    int scanned = f->trusted ? ts_scan_string_run(call->tokenizer, f->arguments, n)
                             : ts_scan(call->tokenizer, f->arguments);
    if (scanned < 0 || scanned == TS_HANDOVER) {
        Py_DECREF(events);
        return scanned < 0 ? -1 : 0;
    }
    if (first) { /* _take_arguments: for trigger in on_arguments(call.state): call.move(trigger) */
        ts_set_ref(&call->state, ready.named_then);
    }
    /* self._last = call; buffer.append_to_length(arguments, length) */
    set_last(self, call_obj);
    text_push(buffer, f->arguments, length);
    if (scanned == TS_CLOSED) {
        /* if closed: self._closed(call, arguments, events) - in C when it readies the call */
        int readied = ready_closed(self, call, f->arguments, events);
        if (readied == 0) {
            readied = python_closed(self, call_obj, f->arguments, events);
        }
        if (readied < 0) {
            Py_DECREF(events);
            return -1;
        }
    }
    *out = events;
    return 1;
}

/* _apply(*fields): `call = self._calls.get(index) if index is not None else None`, then the
 * hot path in C or the Python method. */
static PyObject *apply_fields(AsmObject *self, const Fields *f) {
    if (f->index == Py_None || self->calls == NULL || !PyDict_CheckExact(self->calls)) {
        return python_apply((PyObject *)self, f);
    }
    /* A call is put in _calls once, at an index not there, and _last is always one of them
     * (reset() empties both): the latest call, when it has that index, is the one. */
    PyObject *last = self->last;
    PyObject *call = last != NULL && Py_IS_TYPE(last, fast.hot_call_class) &&
                             ((CallObject *)last)->index == f->index
                         ? last
                         : PyDict_GetItemWithError(self->calls, f->index);
    PyObject *events = NULL;
    if (call == NULL) {
        int started = PyErr_Occurred() ? -1 : start_call(self, f, &events);
        if (started != 0) {
            return started < 0 ? NULL : events;
        }
        return python_apply((PyObject *)self, f);
    }
    Py_INCREF(call);
    int taken = feed_hot(self, call, f, &events);
    Py_DECREF(call);
    if (taken < 0) {
        return NULL;
    }
    return taken ? events : python_apply((PyObject *)self, f);
}

/* `self._apply(*checked_fields(*fields))`: coerce_delta's last step, in Python. */
static PyObject *apply_checked(PyObject *self, const Fields *f) {
    PyObject *fields = PyObject_CallFunctionObjArgs(fast.checked_fields, f->index, f->id,
                                                    f->kind, f->name, f->arguments, NULL);
    if (fields == NULL) {
        return NULL;
    }
    PyObject *apply = PyObject_GetAttr(self, fast.s_apply);
    PyObject *events = apply == NULL ? NULL : PyObject_Call(apply, fields, NULL);
    Py_XDECREF(apply);
    Py_DECREF(fields);
    return events;
}

/* The parameters of a METH_FASTCALL | METH_KEYWORDS method that takes `n` required
 * parameters by position or by name, like `def method(self, a, b)`. */
int ts_parse_params(const char *method, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames, const char *const *names, Py_ssize_t n,
                    PyObject **out) {
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_Size(kwnames);
    if (nargs > n) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd positional arguments but %zd were given",
                     method, n + 1, nargs + 1);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        out[i] = i < nargs ? args[i] : NULL;
    }
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GetItem(kwnames, k);
        Py_ssize_t i = 0;
        while (i < n && PyUnicode_CompareWithASCIIString(key, names[i]) != 0) {
            i++;
        }
        if (i == n || out[i] != NULL) {
            PyErr_Format(PyExc_TypeError, "%s() got %s argument %R", method,
                         i == n ? "an unexpected keyword" : "multiple values for", key);
            return -1;
        }
        out[i] = args[nargs + k];
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (out[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument: '%s'", method,
                         names[i]);
            return -1;
        }
    }
    return 0;
}

/* Assembler.feed(delta): `return self._apply(*delta_fields(delta))` */
static PyObject *asm_feed(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
    static const char *const names[] = {"delta"};
    PyObject *delta;
    if (!configured() || ts_parse_params("feed", args, nargs, kwnames, names, 1, &delta) < 0) {
        return NULL;
    }
    Fields f = {NULL, NULL, NULL, NULL, NULL, 0};
    PyObject *events = NULL;
    switch (read_fields(delta, &f)) {
    case READ_OK:
        events = apply_fields((AsmObject *)op, &f);
        break;
    case READ_CHECK:
        events = apply_checked(op, &f);
        break;
    case READ_RAW:
        events = PyObject_CallFunctionObjArgs(fast.python_feed, op, delta, NULL);
        break;
    default: /* -1: the exception reading the delta, as the Python path raises it */
        break;
    }
    fields_clear(&f);
    return events;
}

/* Assembler.feed_arguments(index, fragment):
 *   if type(index) is not int or index < 0 or type(fragment) is not str:
 *       return self.feed(Delta(index=index, arguments=fragment))  # the Python method
 *   return self._apply(index, None, None, None, fragment) */
static PyObject *asm_feed_arguments(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
    static const char *const names[] = {"index", "fragment"};
    PyObject *params[2];
    if (!configured() ||
        ts_parse_params("feed_arguments", args, nargs, kwnames, names, 2, params) < 0) {
        return NULL;
    }
    PyObject *index = params[0], *fragment = params[1];
    if (!PyLong_CheckExact(index) || ts_is_negative(index) || !PyUnicode_CheckExact(fragment)) {
        return PyObject_CallFunctionObjArgs(fast.python_feed_arguments, op, index, fragment,
                                            NULL);
    }
    Fields f = {index, Py_None, Py_None, Py_None, fragment, 0}; /* borrowed: the caller's */
    return apply_fields((AsmObject *)op, &f);
}

/* Whether `op` is a native Assembler (an instance of AssemblerBase): its exact class, the one
 * seen last, is asked first. */
static int is_assembler(PyObject *op) {
    if (Py_IS_TYPE(op, fast.hot_assembler_class)) {
        return 1;
    }
    if (!PyObject_TypeCheck(op, fast.assembler_type)) {
        return 0;
    }
    ts_set_ref((PyObject **)&fast.hot_assembler_class, (PyObject *)Py_TYPE(op));
    return 1;
}

/* feed_arguments(index, fragment) of `assembler` (fastpath.h). */
PyObject *ts_feed_arguments(PyObject *assembler, PyObject *index, PyObject *fragment) {
    return ts_feed_string_run(assembler, index, fragment, 0);
}

PyObject *ts_feed_string_run(PyObject *assembler, PyObject *index, PyObject *fragment,
                             int trusted) {
    if (fast.join_every > 0 && is_assembler(assembler) && PyLong_CheckExact(index) &&
        !ts_is_negative(index) && PyUnicode_CheckExact(fragment)) {
        Fields f = {index, Py_None, Py_None, Py_None, fragment, trusted}; /* borrowed */
        return apply_fields((AsmObject *)assembler, &f);
    }
    return PyObject_CallMethodObjArgs(assembler, fast.s_feed_arguments, index, fragment, NULL);
}

/* feed({"index": index, "id": call_id, "function": {"name": name}}) of `assembler` (fastpath.h). */
PyObject *ts_feed_start(PyObject *assembler, PyObject *index, PyObject *call_id, PyObject *name) {
    if (fast.join_every > 0 && start.configured &&
        (PyObject *)Py_TYPE(assembler) == start.assembler_class && PyLong_CheckExact(index) &&
        !ts_is_negative(index) && PyUnicode_CheckExact(call_id) &&
        PyUnicode_CheckExact(name)) {
        Fields f = {index, call_id, Py_None, name, Py_None}; /* borrowed: the caller's */
        return apply_fields((AsmObject *)assembler, &f);
    }
    PyObject *function = Py_BuildValue("{sO}", "name", name);
    PyObject *delta = function == NULL ? NULL
                                       : Py_BuildValue("{sOsOsO}", "index", index, "id", call_id,
                                                       "function", function);
    PyObject *events = delta == NULL ? NULL
                                     : PyObject_CallMethod(assembler, "feed", "O", delta);
    Py_XDECREF(function);
    Py_XDECREF(delta);
    return events;
}

int ts_is_arguments_delta(PyObject *event) {
    return fast.arguments_delta != NULL && Py_IS_TYPE(event, fast.arguments_delta);
}

int ts_call_state(PyObject *assembler, PyObject *index, PyObject **state) {
    *state = NULL;
    if (fast.assembler_type == NULL || !PyObject_TypeCheck(assembler, fast.assembler_type)) {
        return 0;
    }
    PyObject *calls = ((AsmObject *)assembler)->calls;
    if (calls == NULL || !PyDict_CheckExact(calls)) {
        return 0;
    }
    PyObject *call = PyDict_GetItemWithError(calls, index);
    if (call == NULL) {
        return PyErr_Occurred() ? -1 : 1;
    }
    if (!PyObject_TypeCheck(call, fast.call_type) || ((CallObject *)call)->state == NULL) {
        return 0;
    }
    *state = ((CallObject *)call)->state;
    return 1;
}

static PyMethodDef asm_methods[] = {
    {"feed", (PyCFunction)(void (*)(void))asm_feed, METH_FASTCALL | METH_KEYWORDS,
     "Take one tool-call delta; return the events it caused (the C hot path)."},
    {"feed_arguments", (PyCFunction)(void (*)(void))asm_feed_arguments,
     METH_FASTCALL | METH_KEYWORDS,
     "``feed(Delta(index=index, arguments=fragment))`` (the C hot path)."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef asm_members[] = {
    {"_calls", T_OBJECT_EX, offsetof(AsmObject, calls), 0, NULL},
    {"_last", T_OBJECT_EX, offsetof(AsmObject, last), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef asm_getset[] = {
    {"_max_argument_chars", asm_get_max_chars, asm_set_max_chars, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot asm_slots[] = {
    {Py_tp_doc, "The members of the assembler that the native hot path reads, and its feed."},
    {Py_tp_new, asm_new},
    {Py_tp_dealloc, asm_dealloc},
    {Py_tp_traverse, asm_traverse},
    {Py_tp_clear, asm_clear},
    {Py_tp_methods, asm_methods},
    {Py_tp_members, asm_members},
    {Py_tp_getset, asm_getset},
    {0, NULL},
};

static PyType_Spec asm_spec = {
    "toolstitch._native.AssemblerBase", sizeof(AsmObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, asm_slots,
};

/* -- configure_ready_path() ----------------------------------------------------------------- */

static PyObject *configure_ready_path(PyObject *module, PyObject *args, PyObject *kwargs) {
    (void)module;
    static char *kwlist[] = {"call_class", "assembler_class", "tool_call",    "call_ready",
                             "complete",   "scan_once",       "default_type", "is_ready",
                             "first_moves", NULL};
    PyObject *o[8], *first_moves;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$O!O!O!O!OOUOO!:configure_ready_path",
                                     kwlist, &PyType_Type, &o[0], &PyType_Type, &o[1],
                                     &PyType_Type, &o[2], &PyType_Type, &o[3], &o[4], &o[5],
                                     &o[6], &o[7], &PyTuple_Type, &first_moves)) {
        return NULL;
    }
    if (PyTuple_Size(first_moves) != 2) {
        PyErr_SetString(PyExc_TypeError, "first_moves must be a (state, state after) pair");
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)o[0], fast.call_type) ||
        !PyType_IsSubtype((PyTypeObject *)o[1], fast.assembler_type) || !PyCallable_Check(o[5]) ||
        !PyCallable_Check(o[7])) {
        PyErr_SetString(PyExc_TypeError,
                        "configure_ready_path() needs a CallBase and an AssemblerBase subclass "
                        "and a callable scan_once and is_ready");
        return NULL;
    }
    ready.configured = 0;
    if (slots_init(ready.call, o[0], call_slot_names, CALL_SLOTS) < 0 ||
        slots_init(ready.assembler, o[1], asm_slot_names, ASM_SLOTS) < 0 ||
        slots_init(ready.tool_call_fields, o[2], tool_call_names, TOOL_CALL_FIELDS) < 0 ||
        slot_init(&ready.ready_call, o[3], "call") < 0) {
        return NULL;
    }
    ts_set_ref((PyObject **)&ready.tool_call, o[2]);
    ts_set_ref((PyObject **)&ready.call_ready, o[3]);
    ts_set_ref(&ready.complete, o[4]);
    ts_set_ref(&ready.scan_once, o[5]);
    ts_set_ref(&ready.default_type, o[6]);
    ts_set_ref(&ready.is_ready, o[7]);
    if (ask_the_rule(o[7]) < 0) {
        return NULL;
    }
    ts_set_ref(&ready.named, PyTuple_GetItem(first_moves, 0));
    ts_set_ref(&ready.named_then, PyTuple_GetItem(first_moves, 1));
    ready.configured = 1;
    Py_RETURN_NONE;
}

/* -- configure_start_path() ----------------------------------------------------------------- */

static int start_names(void) {
    int ok = ts_intern(&start.s_max_calls, "max_calls") == 0 &&
             ts_intern(&start.s_max_id, "max_id_chars") == 0 &&
             ts_intern(&start.s_max_name, "max_name_chars") == 0 &&
             ts_intern(&start.s_max_depth, "max_depth") == 0 &&
             ts_intern(&start.s_max_digits, "max_number_digits") == 0 &&
             ts_intern(&start.s_text, "text") == 0;
    if (ok && start.tokenizer_kwargs == NULL) {
        start.tokenizer_kwargs = PyTuple_Pack(3, start.s_max_depth, start.s_max_digits, start.s_text);
    }
    if (ok && start.no_args == NULL) {
        start.no_args = PyTuple_New(0);
    }
    return ok && start.tokenizer_kwargs != NULL && start.no_args != NULL ? 0 : -1;
}

static PyObject *configure_start_path(PyObject *module, PyObject *args, PyObject *kwargs) {
    (void)module;
    static char *kwlist[] = {"assembler_class", "call_class", "make_tokenizer", "call_started",
                             "start_moves", NULL};
    PyObject *o[5];
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$O!O!OO!O!:configure_start_path", kwlist,
                                     &PyType_Type, &o[0], &PyType_Type, &o[1], &o[2],
                                     &PyType_Type, &o[3], &PyTuple_Type, &o[4])) {
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)o[0], fast.assembler_type) ||
        !PyType_IsSubtype((PyTypeObject *)o[1], fast.call_type) || !PyCallable_Check(o[2]) ||
        PyTuple_Size(o[4]) != 2) {
        PyErr_SetString(PyExc_TypeError,
                        "configure_start_path() needs an AssemblerBase and a CallBase subclass, "
                        "a callable make_tokenizer and a (state, state after the id) pair");
        return NULL;
    }
    start.configured = 0;
    if (start_names() < 0 ||
        slots_init(start.started_fields, o[3], started_names, STARTED_FIELDS) < 0) {
        return NULL;
    }
    ts_set_ref(&start.assembler_class, o[0]);
    ts_set_ref(&start.call_class, o[1]);
    ts_set_ref(&start.make_tokenizer, o[2]);
    ts_set_ref((PyObject **)&start.call_started, o[3]);
    ts_set_ref(&start.awaiting_id, PyTuple_GetItem(o[4], 0));
    ts_set_ref(&start.named, PyTuple_GetItem(o[4], 1));
    start.configured = 1;
    Py_RETURN_NONE;
}

/* -- configure_fast_path() ------------------------------------------------------------------ */

/* The member descriptors of ArgumentsDelta's two fields, of one type with a __set__. */
static int check_slots(PyObject *index_slot, PyObject *fragment_slot) {
    if (Py_TYPE(index_slot) != Py_TYPE(fragment_slot) ||
        PyType_GetSlot(Py_TYPE(index_slot), Py_tp_descr_set) == NULL) {
        PyErr_SetString(PyExc_TypeError, "index_slot and fragment_slot must be slot descriptors");
        return -1;
    }
    return 0;
}

static PyObject *configure_fast_path(PyObject *module, PyObject *args, PyObject *kwargs) {
    (void)module;
    static char *kwlist[] = {"join_every",     "text_snapshot",  "empty_text",
                             "accumulating",   "arguments_delta", "index_slot",
                             "fragment_slot",  "delta_type",      "mapping",
                             "not_deltas",     "checked_fields",  "python_feed",
                             "python_feed_arguments", NULL};
    Py_ssize_t join_every;
    PyObject *o[12];
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$nOOOO!OOOOOOOO:configure_fast_path",
                                     kwlist, &join_every, &o[0], &o[1], &o[2], &PyType_Type,
                                     &o[3], &o[4], &o[5], &o[6], &o[7], &o[8], &o[9], &o[10],
                                     &o[11])) {
        return NULL;
    }
    if (join_every < 1) {
        PyErr_SetString(PyExc_ValueError, "join_every must be positive");
        return NULL;
    }
    if (check_slots(o[4], o[5]) < 0) {
        return NULL;
    }
    ts_set_ref(&fast.text_snapshot, o[0]);
    ts_set_ref(&fast.empty_text, o[1]);
    ts_set_ref(&fast.accumulating, o[2]);
    ts_set_ref((PyObject **)&fast.arguments_delta, o[3]);
    for (int i = 0; i < 2; i++) {
        Slot *slot = &fast.delta_fields[i];
        ts_set_ref(&slot->descr, o[4 + i]);
        slot->get = (descrgetfunc)PyType_GetSlot(Py_TYPE(o[4 + i]), Py_tp_descr_get);
        slot->set = (descrsetfunc)PyType_GetSlot(Py_TYPE(o[4 + i]), Py_tp_descr_set);
    }
    ts_set_ref(&fast.delta_type, o[6]);
    ts_set_ref(&fast.mapping, o[7]);
    ts_set_ref(&fast.not_deltas, o[8]);
    ts_set_ref(&fast.checked_fields, o[9]);
    ts_set_ref(&fast.python_feed, o[10]);
    ts_set_ref(&fast.python_feed_arguments, o[11]);
    fast.join_every = join_every;
    Py_RETURN_NONE;
}

static PyMethodDef fast_functions[] = {
    {"configure_fast_path", (PyCFunction)(void (*)(void))configure_fast_path,
     METH_VARARGS | METH_KEYWORDS,
     "Hand the fast feed the Python objects it needs (core/assembler.py calls it once)."},
    {"configure_ready_path", (PyCFunction)(void (*)(void))configure_ready_path,
     METH_VARARGS | METH_KEYWORDS,
     "Hand the ready path the classes and objects it needs (core/assembler.py calls it once "
     "the native classes exist)."},
    {"configure_start_path", (PyCFunction)(void (*)(void))configure_start_path,
     METH_VARARGS | METH_KEYWORDS,
     "Hand the start path the classes, make_tokenizer and the machine's state after a first id "
     "(core/assembler.py calls it once the native classes exist)."},
    {NULL, NULL, 0, NULL},
};

/* -- module init ----------------------------------------------------------------------------- */

int ts_intern(PyObject **slot, const char *text) {
    PyObject *name = PyUnicode_InternFromString(text);
    if (name == NULL) {
        return -1;
    }
    ts_set_ref(slot, name);
    Py_DECREF(name);
    return 0;
}

static int intern_names(void) {
    int ok = ts_intern(&fast.s_function, "function") == 0 && ts_intern(&fast.s_index, "index") == 0 &&
             ts_intern(&fast.s_id, "id") == 0 && ts_intern(&fast.s_type, "type") == 0 &&
             ts_intern(&fast.s_name, "name") == 0 && ts_intern(&fast.s_arguments, "arguments") == 0 &&
             ts_intern(&fast.s_get, "get") == 0 && ts_intern(&fast.s_apply, "_apply") == 0 &&
             ts_intern(&fast.s_closed, "_closed") == 0 && ts_intern(&fast.s_empty, "") == 0 &&
             ts_intern(&fast.s_feed_arguments, "feed_arguments") == 0;
    return ok ? 0 : -1;
}

/* Create the type of `spec`, add it to the module and keep it in *slot. */
int ts_add_type(PyObject *module, PyType_Spec *spec, const char *name, PyTypeObject **slot) {
    PyObject *type = PyType_FromModuleAndSpec(module, spec, NULL);
    if (type == NULL) {
        return -1;
    }
    int added = PyModule_AddObjectRef(module, name, type);
    if (added == 0) {
        ts_set_ref((PyObject **)slot, type);
    }
    Py_DECREF(type);
    return added;
}

int ts_fastpath_init(PyObject *module) {
    if (intern_names() < 0 ||
        ts_add_type(module, &text_spec, "TextBuffer", &fast.text_type) < 0 ||
        ts_add_type(module, &call_spec, "CallBase", &fast.call_type) < 0 ||
        ts_add_type(module, &asm_spec, "AssemblerBase", &fast.assembler_type) < 0 ||
        PyModule_AddFunctions(module, fast_functions) < 0) {
        return -1;
    }
    ts_set_ref(&fast.module, module);
    return 0;
}
