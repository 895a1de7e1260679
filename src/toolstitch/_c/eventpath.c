/* The event fast path (eventpath.h): the commonest event of a content-block stream, from the
 * Stitcher's feed to the assembler's C hot path without a Python frame.
 *
 * Stitcher.feed (stitch/stitcher.py) takes a plain dict of a known, confirmed provider: with
 * the adapter's `_fragment` shortcut set it does
 *
 *     self.events_read += 1
 *     item = self._fragment(data)       # (core index, fragment) or None
 *     if item is not None:
 *         events = self.assembler.feed_arguments(*item)
 *         if len(events) == 1 and type(events[0]) is ArgumentsDelta and self._understood:
 *             return events
 *         return self._observe(events)
 *     ...                               # the adapter reads the event
 *
 * StitcherBase.feed does exactly that in C when `_fragment` is a BlockFragments (the native
 * Stitcher sets one only together with `_direct`, and `close` clears both), the event is an
 * exact dict and the reader takes it; everything else calls the Python Stitcher.feed, with
 * nothing changed (a reader that declines has done nothing). BlockFragments is the C form of
 * AnthropicAdapter._fragment: one unbound reader per process with the adapter module's names,
 * bind()-ed to each adapter; it decides as the method does, and where a value is not of the
 * exact type the method expects, it asks the method.
 *
 * State is process-wide (statics), as in fastpath.c. */
#include "eventpath.h"

#include <stddef.h>
#include <string.h>
#include <structmember.h>

#include "fastpath.h"
#include "quiet.h"

typedef struct {
    PyTypeObject *reader_type;    /* BlockFragments */
    PyTypeObject *stitcher_type;  /* StitcherBase */
    PyObject *python_feed;        /* the Python Stitcher.feed (configure_event_path) */
    PyObject *declined_feed;      /* its Stitcher._declined: a dict the reader declined */
    PyObject *python_observe;     /* the Python Stitcher._observe */
    PyObject *notes;              /* stitcher._NOTES: event type -> what the Stitcher notes */
    PyObject *note_of;            /* stitcher._note_of: the entry of a type not in it */
    PyTypeObject *stream_warning; /* vocab.stream_events.StreamWarning */
    PyObject *assembler_class;    /* the native Assembler, whose feed_arguments is C */
    PyObject *s_type, *s_delta, *s_index, *s_blocks, *s_client, *s_streamed, *s_core;
    PyObject *s_thinking, *s_records, *s_lane_events;
} EventState;

static EventState ev;

/* -- BlockFragments ------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *adapter;      /* its `_blocks`: block index -> state (client, core, streamed) */
    PyObject *fallback;     /* the adapter's Python `_fragment`, which this is the C form of */
    PyObject *event_type;   /* the event type of a block's delta */
    PyObject *delta_type;   /* the delta type of an arguments fragment */
    PyObject *text_key;     /* the delta's key of the fragment */
    PyObject *stop_type;    /* the event type of a block's end */
    PyObject *silent_types; /* frozenset: the event types of no items */
    PyObject *final_states; /* tuple: the CallStates of a call that has ended */
    PyObject *adapter_type; /* the adapter class, whose `_blocks` and `_thinking` slots are */
    PyObject *blocks_slot;  /* read directly, through their member descriptors */
    PyObject *thinking_slot;
    descrgetfunc blocks_get, thinking_get;
    PyObject *block_type; /* the class of a block state, whose slots are read directly: */
    PyObject *client_slot, *core_slot, *streamed_slot; /* its member descriptors, */
    descrgetfunc client_get, core_get;                 /* their __get__ */
    descrsetfunc streamed_set;                         /* and __set__ */
} ReaderObject;

/* What a reader made of an event: nothing (the adapter must read it), a fragment, a quiet
 * event (no items, nothing changed), or a value only the Python method may judge. */
enum { READ_NONE = 0, READ_TAKEN = 1, READ_ASK = 2, READ_QUIET = 3 };

static int reader_traverse(PyObject *op, visitproc visit, void *arg) {
    ReaderObject *self = (ReaderObject *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->adapter);
    Py_VISIT(self->fallback);
    Py_VISIT(self->event_type);
    Py_VISIT(self->delta_type);
    Py_VISIT(self->text_key);
    Py_VISIT(self->stop_type);
    Py_VISIT(self->silent_types);
    Py_VISIT(self->final_states);
    Py_VISIT(self->adapter_type);
    Py_VISIT(self->blocks_slot);
    Py_VISIT(self->thinking_slot);
    Py_VISIT(self->block_type);
    Py_VISIT(self->client_slot);
    Py_VISIT(self->core_slot);
    Py_VISIT(self->streamed_slot);
    return 0;
}

static int reader_clear(PyObject *op) {
    ReaderObject *self = (ReaderObject *)op;
    Py_CLEAR(self->adapter);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->event_type);
    Py_CLEAR(self->delta_type);
    Py_CLEAR(self->text_key);
    Py_CLEAR(self->stop_type);
    Py_CLEAR(self->silent_types);
    Py_CLEAR(self->final_states);
    Py_CLEAR(self->adapter_type);
    Py_CLEAR(self->blocks_slot);
    Py_CLEAR(self->thinking_slot);
    Py_CLEAR(self->block_type);
    Py_CLEAR(self->client_slot);
    Py_CLEAR(self->core_slot);
    Py_CLEAR(self->streamed_slot);
    return 0;
}

static void reader_dealloc(PyObject *op) { ts_gc_dealloc(op, reader_clear); }

/* BlockFragments(*, event_type, delta_type, text_key, stop_type, silent_types, final_states,
 * adapter_type, block_type): an unbound reader, which `bind` gives an adapter. */
static PyObject *reader_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"event_type",   "delta_type",   "text_key",
                             "stop_type",    "silent_types", "final_states",
                             "adapter_type", "block_type",   NULL};
    PyObject *o[8];
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$UUUUO!O!O!O!:BlockFragments", kwlist, &o[0],
                                     &o[1], &o[2], &o[3], &PyFrozenSet_Type, &o[4],
                                     &PyTuple_Type, &o[5], &PyType_Type, &o[6], &PyType_Type,
                                     &o[7])) {
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    ReaderObject *self = (ReaderObject *)alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    ts_set_ref(&self->event_type, o[0]);
    ts_set_ref(&self->delta_type, o[1]);
    ts_set_ref(&self->text_key, o[2]);
    ts_set_ref(&self->stop_type, o[3]);
    ts_set_ref(&self->silent_types, o[4]);
    ts_set_ref(&self->final_states, o[5]);
    ts_set_ref(&self->adapter_type, o[6]);
    ts_set_ref(&self->block_type, o[7]);
    if ((self->blocks_slot = ts_slot_of(o[6], ev.s_blocks)) == NULL ||
        (self->thinking_slot = ts_slot_of(o[6], ev.s_thinking)) == NULL ||
        (self->client_slot = ts_slot_of(o[7], ev.s_client)) == NULL ||
        (self->core_slot = ts_slot_of(o[7], ev.s_core)) == NULL ||
        (self->streamed_slot = ts_slot_of(o[7], ev.s_streamed)) == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->blocks_get = (descrgetfunc)PyType_GetSlot(Py_TYPE(self->blocks_slot), Py_tp_descr_get);
    self->thinking_get =
        (descrgetfunc)PyType_GetSlot(Py_TYPE(self->thinking_slot), Py_tp_descr_get);
    self->client_get = (descrgetfunc)PyType_GetSlot(Py_TYPE(self->client_slot), Py_tp_descr_get);
    self->core_get = (descrgetfunc)PyType_GetSlot(Py_TYPE(self->core_slot), Py_tp_descr_get);
    self->streamed_set =
        (descrsetfunc)PyType_GetSlot(Py_TYPE(self->streamed_slot), Py_tp_descr_set);
    return (PyObject *)self;
}

/* reader.bind(adapter, fallback): a reader of `adapter`'s blocks with this one's names, whose
 * `fallback` (the adapter's Python `_fragment`) decides what C does not. */
static PyObject *reader_bind(PyObject *op, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "bind() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    if (!PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "fallback must be callable");
        return NULL;
    }
    ReaderObject *self = (ReaderObject *)op;
    PyTypeObject *type = Py_TYPE(op);
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    ReaderObject *bound = (ReaderObject *)alloc(type, 0);
    if (bound == NULL) {
        return NULL;
    }
    ts_set_ref(&bound->adapter, args[0]);
    ts_set_ref(&bound->fallback, args[1]);
    ts_set_ref(&bound->event_type, self->event_type);
    ts_set_ref(&bound->delta_type, self->delta_type);
    ts_set_ref(&bound->text_key, self->text_key);
    ts_set_ref(&bound->stop_type, self->stop_type);
    ts_set_ref(&bound->silent_types, self->silent_types);
    ts_set_ref(&bound->final_states, self->final_states);
    ts_set_ref(&bound->adapter_type, self->adapter_type);
    ts_set_ref(&bound->blocks_slot, self->blocks_slot);
    ts_set_ref(&bound->thinking_slot, self->thinking_slot);
    ts_set_ref(&bound->block_type, self->block_type);
    ts_set_ref(&bound->client_slot, self->client_slot);
    ts_set_ref(&bound->core_slot, self->core_slot);
    ts_set_ref(&bound->streamed_slot, self->streamed_slot);
    bound->blocks_get = self->blocks_get;
    bound->thinking_get = self->thinking_get;
    bound->client_get = self->client_get;
    bound->core_get = self->core_get;
    bound->streamed_set = self->streamed_set;
    return (PyObject *)bound;
}

static int is_bound(PyObject *reader) {
    return Py_IS_TYPE(reader, ev.reader_type) && ((ReaderObject *)reader)->adapter != NULL;
}

/* `value == expected` for an exact str `expected` and `value` (borrowed, NULL: absent):
 * READ_TAKEN equal; READ_NONE not, or absent (None, which is no str); READ_ASK when the value
 * is not an exact str, whose comparison is its own business; -1 with an exception set. */
static int same_text(PyObject *value, PyObject *expected) {
    if (value == NULL) {
        return PyErr_Occurred() ? -1 : READ_NONE;
    }
    if (!PyUnicode_CheckExact(value)) {
        return READ_ASK;
    }
    /* str == str: identity, then length, kind and memcmp (PyUnicode_Compare goes character
     * by character, for an order this does not need). */
    int equal = PyObject_RichCompareBool(value, expected, Py_EQ);
    return equal < 0 ? -1 : (equal ? READ_TAKEN : READ_NONE);
}

/* `mapping.get(key) == expected` for an exact dict (same_text). */
static int has_text(PyObject *mapping, PyObject *key, PyObject *expected) {
    return same_text(PyDict_GetItemWithError(mapping, key), expected);
}

/* The block state of `payload["index"]` if it is a client block (a call), borrowed from the
 * adapter's `_blocks` (held by the caller's reference to `*blocks`): READ_TAKEN, READ_NONE,
 * READ_ASK or -1. */
static int client_block(ReaderObject *self, PyObject *payload, PyObject **blocks,
                        PyObject **state) {
    /* index = payload.get("index"); state = self._blocks.get(index) if type(index) is int */
    PyObject *index = PyDict_GetItemWithError(payload, ev.s_index);
    if (index == NULL || !PyLong_CheckExact(index)) {
        return PyErr_Occurred() ? -1 : READ_NONE;
    }
    /* the adapter class's own slot (a subclass may override it: then as Python reads it) */
    *blocks = Py_IS_TYPE(self->adapter, (PyTypeObject *)self->adapter_type)
                  ? self->blocks_get(self->blocks_slot, self->adapter, self->adapter_type)
                  : PyObject_GetAttr(self->adapter, ev.s_blocks);
    if (*blocks == NULL) {
        return -1;
    }
    if (!PyDict_CheckExact(*blocks)) {
        return READ_ASK;
    }
    *state = PyDict_GetItemWithError(*blocks, index);
    if (*state == NULL) {
        return PyErr_Occurred() ? -1 : READ_NONE;
    }
    if ((PyObject *)Py_TYPE(*state) != self->block_type) {
        return READ_ASK;
    }
    /* if not state.client: return None */
    PyObject *client = self->client_get(self->client_slot, *state, self->block_type);
    if (client == NULL) {
        return -1;
    }
    int verdict = client == Py_True ? READ_TAKEN : (client == Py_False ? READ_NONE : READ_ASK);
    Py_DECREF(client);
    return verdict;
}

/* Whether the call of a block's state has ended in the core (`_quiet`'s last test, on the
 * state of a streamed client block): READ_QUIET, READ_NONE, READ_ASK or -1. */
static int call_ended(ReaderObject *self, PyObject *state) {
    /* record = self.records.record(state.core) */
    PyObject *records = PyObject_GetAttr(self->adapter, ev.s_records);
    if (records == NULL) {
        return -1;
    }
    PyObject *core = NULL, *call_state = NULL;
    int verdict = READ_ASK;
    if ((PyObject *)Py_TYPE(records) == ev.assembler_class) { /* its own `record`, no other */
        core = self->core_get(self->core_slot, state, self->block_type);
        int read = core == NULL ? -1 : ts_call_state(records, core, &call_state);
        verdict = read < 0 ? -1 : (read == 0 ? READ_ASK : READ_NONE);
    }
    /* return record is not None and record.state.is_final */
    Py_ssize_t finals = call_state == NULL ? 0 : PyTuple_Size(self->final_states);
    for (Py_ssize_t i = 0; i < finals && verdict != READ_QUIET; i++) {
        if (call_state == PyTuple_GetItem(self->final_states, i)) {
            verdict = READ_QUIET;
        }
    }
    Py_XDECREF(core);
    Py_DECREF(records);
    return verdict;
}

/* AnthropicAdapter._quiet(kind, payload) for an event whose type `kind` (borrowed; NULL:
 * absent) is not the delta's: READ_QUIET (an event of no items), READ_NONE, READ_ASK or -1.
 * Reads only. */
static int reader_quiet(ReaderObject *self, PyObject *payload, PyObject *kind) {
    if (kind == NULL || !PyUnicode_CheckExact(kind)) {
        return READ_NONE; /* absent, or not a str: not quiet (a str subclass was asked) */
    }
    int silent = PySet_Contains(self->silent_types, kind);
    if (silent != 0) {
        return silent < 0 ? -1 : READ_QUIET;
    }
    int stop = same_text(kind, self->stop_type);
    if (stop != READ_TAKEN) {
        return stop;
    }
    /* index = payload.get("index"); if type(index) is not int or index in self._thinking */
    PyObject *index = PyDict_GetItemWithError(payload, ev.s_index);
    if (index == NULL || !PyLong_CheckExact(index)) {
        return PyErr_Occurred() ? -1 : READ_NONE;
    }
    if (!Py_IS_TYPE(self->adapter, (PyTypeObject *)self->adapter_type)) {
        return READ_ASK; /* a subclass may read its state otherwise */
    }
    PyObject *thinking = self->thinking_get(self->thinking_slot, self->adapter, self->adapter_type);
    if (thinking == NULL) {
        return -1;
    }
    int open = PyDict_CheckExact(thinking) ? PyDict_Contains(thinking, index) : -2;
    Py_DECREF(thinking);
    if (open != 0) {
        return open == -1 ? -1 : (open == -2 ? READ_ASK : READ_NONE);
    }
    /* state = self._blocks.get(index); state.client is True and state.streamed is True */
    PyObject *blocks = NULL, *state = NULL;
    int found = client_block(self, payload, &blocks, &state);
    if (found == READ_TAKEN) {
        /* every member descriptor has the same __get__: `client`'s reads `streamed` too */
        PyObject *streamed = self->client_get(self->streamed_slot, state, self->block_type);
        found = streamed == NULL ? -1 : (streamed == Py_True ? call_ended(self, state) : READ_NONE);
        Py_XDECREF(streamed);
    }
    Py_XDECREF(blocks);
    return found;
}

/* The fragment of a delta event: READ_TAKEN with *core and *fragment (new references) and the
 * block marked streamed; READ_QUIET for a quiet event (reader_quiet); READ_NONE, having done
 * nothing; READ_ASK (the Python method must read it); or -1 with an exception set. `payload`
 * is an exact dict. */
static int reader_read(ReaderObject *self, PyObject *payload, PyObject **core,
                       PyObject **fragment) {
    /* kind = payload.get("type"); if kind != EVENT_TYPE: () if self._quiet(...) else None */
    PyObject *kind = PyDict_GetItemWithError(payload, ev.s_type);
    int same = same_text(kind, self->event_type);
    if (same == READ_NONE) {
        return PyErr_Occurred() ? -1 : reader_quiet(self, payload, kind);
    }
    if (same != READ_TAKEN) {
        return same;
    }
    /* delta = payload.get("delta"); if type(delta) is not dict or delta.get("type") != ... */
    PyObject *delta = PyDict_GetItemWithError(payload, ev.s_delta);
    if (delta == NULL || !PyDict_CheckExact(delta)) {
        return PyErr_Occurred() ? -1 : READ_NONE;
    }
    same = has_text(delta, ev.s_type, self->delta_type);
    if (same != READ_TAKEN) {
        return same;
    }
    PyObject *blocks = NULL, *state = NULL;
    int found = client_block(self, payload, &blocks, &state);
    if (found != READ_TAKEN) {
        Py_XDECREF(blocks);
        return found;
    }
    /* fragment = delta.get(TEXT_KEY); if type(fragment) is not str or not fragment: None */
    PyObject *text = PyDict_GetItemWithError(delta, self->text_key);
    int taken = text != NULL && PyUnicode_CheckExact(text) && PyUnicode_GetLength(text) > 0;
    if (!taken || self->streamed_set(self->streamed_slot, state, Py_True) < 0 ||
        (*core = self->core_get(self->core_slot, state, self->block_type)) == NULL) {
        Py_DECREF(blocks);
        return PyErr_Occurred() ? -1 : READ_NONE;
    }
    *fragment = Py_NewRef(text);
    Py_DECREF(blocks);
    return READ_TAKEN;
}

/* reader(payload): `(core, fragment)` or None, as the adapter's `_fragment(payload)`. */
static PyObject *reader_call(PyObject *op, PyObject *args, PyObject *kwargs) {
    ReaderObject *self = (ReaderObject *)op;
    PyObject *payload;
    static char *kwlist[] = {"payload", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:BlockFragments", kwlist, &payload)) {
        return NULL;
    }
    if (self->adapter == NULL) {
        PyErr_SetString(PyExc_TypeError, "an unbound BlockFragments reads nothing: bind() it");
        return NULL;
    }
    PyObject *core = NULL, *fragment = NULL;
    int read = PyDict_CheckExact(payload) ? reader_read(self, payload, &core, &fragment)
                                          : READ_ASK;
    if (read == READ_ASK) {
        return PyObject_CallFunctionObjArgs(self->fallback, payload, NULL);
    }
    if (read == READ_QUIET) {
        return PyTuple_New(0);
    }
    if (read != READ_TAKEN) {
        return read < 0 ? NULL : Py_NewRef(Py_None);
    }
    PyObject *item = PyTuple_Pack(2, core, fragment);
    Py_DECREF(core);
    Py_DECREF(fragment);
    return item;
}

static PyMethodDef reader_methods[] = {
    {"bind", (PyCFunction)(void (*)(void))reader_bind, METH_FASTCALL,
     "bind(adapter, fallback): a reader of the adapter's blocks (fallback: its Python "
     "``_fragment``)."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot reader_slots[] = {
    {Py_tp_doc, "BlockFragments(*, event_type, delta_type, text_key, adapter_type, block_type)\n"
                "--\n\n"
                "The C form of an adapter's ``_fragment`` for content-block streams, once "
                "``bind``-ed to the adapter: called with a plain dict event, ``(core index, "
                "fragment)`` or ``None``, as ``fallback`` (that method) returns."},
    {Py_tp_methods, reader_methods},
    {Py_tp_new, reader_new},
    {Py_tp_dealloc, reader_dealloc},
    {Py_tp_traverse, reader_traverse},
    {Py_tp_clear, reader_clear},
    {Py_tp_call, reader_call},
    {0, NULL},
};

static PyType_Spec reader_spec = {
    "toolstitch._native.BlockFragments", sizeof(ReaderObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, reader_slots,
};

/* -- the protocol's block starts and message deltas --------------------------------------
 *
 * Besides the fragments, three events of every call-making message go the same way in C when
 * they are plain (configure_block_events() hands over the adapter module's names and its
 * event makers, once):
 *
 * - the `content_block_start` of a `tool_use` block (CLIENT_BLOCKS) with an exact int index
 *   not yet a call's (`_cores`), exact non-empty str id and name and no `caller`:
 *   AnthropicAdapter._start / _tool_block / _core_index for that case (the block's state made
 *   by its own class, kept in `_blocks`, the id in `_ids` while there is room, the index in
 *   `_cores`), then the call's start fed to the assembler (ts_feed_start: its C start path);
 * - a `message_delta` whose `delta` and `usage` are exact dicts (or absent): its
 *   FinishReason (an exact non-empty str `stop_reason`) and Usage (a non-empty `usage`, copied),
 *   made by the adapter's own makers (adapters._base.finish_event, usage_event);
 * - the first `message_start`, whose `message` is an exact dict with a `usage` exact dict or
 *   absent and no `content` (or an empty list): its Usage, and `_messages` set to 1.
 *
 * The Stitcher's notes are then taken by its Python `_observe`, as for any event. Anything
 * else - another block, an odd or absent field, a str subclass, an index already used, an
 * adapter subclass - is read by the adapter's Python method, with nothing changed here. */

typedef struct {
    int configured;
    PyObject *start_type, *finish_type; /* the two event types */
    PyObject *client_types;             /* frozenset: the block types of a client's call */
    PyObject *finish, *usage;           /* the adapter's makers of FinishReason and Usage */
    PyObject *message_type;             /* and the message's start */
    PyObject *ids_slot, *cores_slot;    /* the adapter's `_ids`, `_cores` and `_messages` slots */
    PyObject *messages_slot;
    descrgetfunc ids_get, cores_get, messages_get;
    descrsetfunc messages_set;
    descrsetfunc core_set;              /* the block state's `core` __set__ */
    PyObject *s_block, *s_id, *s_name, *s_input, *s_caller, *s_reason, *s_usage, *s_limits,
        *s_max_calls, *s_message, *s_content;
} BlockEvents;

static BlockEvents blk;

enum { READ_START = 4, READ_ITEMS = 5 };

/* `payload.get(key)` of an exact dict, borrowed (NULL: absent, or an exception is set). */
static PyObject *field(PyObject *mapping, PyObject *key) {
    return PyDict_GetItemWithError(mapping, key);
}

/* What `_str(value)` keeps: 1 an exact non-empty str; 0 none (absent, None, another type, "");
 * -1 a str subclass, which Python judges. */
static int plain_text(PyObject *value) {
    if (value == NULL || !PyUnicode_Check(value)) {
        return 0;
    }
    if (!PyUnicode_CheckExact(value)) {
        return -1;
    }
    return PyUnicode_GetLength(value) > 0;
}

/* The stop reason (borrowed; NULL: none) and usage (borrowed; NULL: none) of a plain
 * message_delta: 1; 0 not plain (`mapping()` of another type, a str subclass: Python's); -1. */
static int finish_fields(PyObject *payload, PyObject **reason, PyObject **usage) {
    PyObject *delta = field(payload, ev.s_delta);
    *usage = delta == NULL && PyErr_Occurred() ? NULL : field(payload, blk.s_usage);
    if (PyErr_Occurred()) {
        return -1;
    }
    delta = delta == Py_None ? NULL : delta;
    *usage = *usage == Py_None ? NULL : *usage;
    if ((delta != NULL && !PyDict_CheckExact(delta)) ||
        (*usage != NULL && !PyDict_CheckExact(*usage))) {
        return 0;
    }
    *reason = delta == NULL ? NULL : field(delta, blk.s_reason);
    int finished = PyErr_Occurred() ? -2 : plain_text(*reason);
    if (finished < 0) {
        return finished == -2 ? -1 : 0;
    }
    *reason = finished ? *reason : NULL;
    return 1;
}

/* `items.append(maker(value))`: 0 or -1. */
static int append_made(PyObject *items, PyObject *maker, PyObject *value) {
    PyObject *event = PyObject_CallFunctionObjArgs(maker, value, NULL);
    int appended = event == NULL ? -1 : PyList_Append(items, event);
    Py_XDECREF(event);
    return appended;
}

static int append_usage(PyObject *items, PyObject *usage);

/* The message_delta branch of _feed_declined: READ_ITEMS with *items (a new list), READ_NONE
 * (nothing done), or -1. */
static int read_finish(PyObject *payload, PyObject **items) {
    PyObject *reason = NULL, *usage = NULL;
    int plain = finish_fields(payload, &reason, &usage);
    if (plain != 1) {
        return plain < 0 ? -1 : READ_NONE;
    }
    if ((*items = PyList_New(0)) == NULL) {
        return -1;
    }
    int ok = (reason == NULL || append_made(*items, blk.finish, reason) == 0) &&
             append_usage(*items, usage) == 0;
    if (!ok) {
        Py_CLEAR(*items);
        return -1;
    }
    return READ_ITEMS;
}

/* `items.append(usage_event(dict(usage)))` for a non-empty exact dict `usage`: 0 or -1. */
static int append_usage(PyObject *items, PyObject *usage) {
    if (usage == NULL || PyDict_Size(usage) == 0) {
        return 0;
    }
    PyObject *copy = PyDict_Copy(usage);
    int appended = copy == NULL ? -1 : append_made(items, blk.usage, copy);
    Py_XDECREF(copy);
    return appended;
}

/* The usage (borrowed; NULL: none) of the first message_start, when it is plain: `message` an
 * exact dict, its `usage` an exact dict or absent, its `content` absent or an empty exact list,
 * and no message seen before (`_messages` 0). 1, 0 (Python's: another message resets the
 * blocks, whole blocks in `content` are calls) or -1. */
static int message_fields(ReaderObject *self, PyObject *payload, PyObject **usage) {
    PyObject *message = field(payload, blk.s_message);
    if (message == NULL || !PyDict_CheckExact(message) ||
        !Py_IS_TYPE(self->adapter, (PyTypeObject *)self->adapter_type)) {
        return PyErr_Occurred() ? -1 : 0;
    }
    *usage = field(message, blk.s_usage);
    PyObject *content = *usage == NULL && PyErr_Occurred() ? NULL : field(message, blk.s_content);
    if (PyErr_Occurred()) {
        return -1;
    }
    *usage = *usage == Py_None ? NULL : *usage;
    if ((*usage != NULL && !PyDict_CheckExact(*usage)) ||
        (content != NULL && content != Py_None &&
         !(PyList_CheckExact(content) && PyList_Size(content) == 0))) {
        return 0;
    }
    PyObject *seen = blk.messages_get(blk.messages_slot, self->adapter, self->adapter_type);
    if (seen == NULL) {
        return -1;
    }
    int first = PyLong_CheckExact(seen) && PyLong_AsLong(seen) == 0;
    Py_DECREF(seen);
    return first;
}

/* The message_start branch of _feed_declined (_message_start) for the first, plain message:
 * READ_ITEMS with *items, READ_NONE (nothing done) or -1. */
static int read_message(ReaderObject *self, PyObject *payload, PyObject **items) {
    PyObject *usage = NULL;
    int plain = message_fields(self, payload, &usage);
    if (plain != 1) {
        return plain < 0 ? -1 : READ_NONE;
    }
    if ((*items = PyList_New(0)) == NULL) {
        return -1;
    }
    PyObject *one = PyLong_FromLong(1); /* self._messages += 1 */
    if (one == NULL || append_usage(*items, usage) < 0 ||
        blk.messages_set(blk.messages_slot, self->adapter, one) < 0) {
        Py_XDECREF(one);
        Py_CLEAR(*items);
        return -1;
    }
    Py_DECREF(one);
    return READ_ITEMS;
}

/* The fields of a plain tool_use block start: 1 with the block (borrowed) and its index, id
 * and name (borrowed); 0 not plain; -1. */
static int start_fields(ReaderObject *self, PyObject *payload, PyObject **fields) {
    PyObject *index = field(payload, ev.s_index);
    PyObject *block = index == NULL ? NULL : field(payload, blk.s_block);
    if (block == NULL || !PyLong_CheckExact(index) || !PyDict_CheckExact(block) ||
        !Py_IS_TYPE(self->adapter, (PyTypeObject *)self->adapter_type)) {
        return PyErr_Occurred() ? -1 : 0;
    }
    PyObject *kind = field(block, ev.s_type);
    if (kind == NULL || !PyUnicode_CheckExact(kind)) {
        return PyErr_Occurred() ? -1 : 0;
    }
    int client = PySet_Contains(blk.client_types, kind);
    PyObject *call_id = client == 1 ? field(block, blk.s_id) : NULL;
    PyObject *name = call_id == NULL ? NULL : field(block, blk.s_name);
    PyObject *caller = name == NULL ? NULL : field(block, blk.s_caller);
    if (client < 0 || PyErr_Occurred()) {
        return -1;
    }
    if (client == 0 || plain_text(call_id) != 1 || plain_text(name) != 1 ||
        (caller != NULL && caller != Py_None)) {
        return 0;
    }
    fields[0] = block, fields[1] = index, fields[2] = call_id, fields[3] = name, fields[4] = kind;
    return 1;
}

/* len(self._ids) < self.records.limits.max_calls: 1, 0 or -1. */
static int id_room(ReaderObject *self, PyObject *ids) {
    PyObject *records = PyObject_GetAttr(self->adapter, ev.s_records);
    PyObject *limits = records == NULL ? NULL : PyObject_GetAttr(records, blk.s_limits);
    PyObject *bound = limits == NULL ? NULL : PyObject_GetAttr(limits, blk.s_max_calls);
    Py_XDECREF(records);
    Py_XDECREF(limits);
    if (bound == NULL) {
        return -1;
    }
    PyObject *count = PyLong_FromSsize_t(PySet_Size(ids));
    int room = count == NULL ? -1 : PyObject_RichCompareBool(count, bound, Py_LT);
    Py_XDECREF(count);
    Py_DECREF(bound);
    return room;
}

/* The adapter's `_ids` and `_cores` (new references) when both are exact sets and the index
 * is not a call's yet: 1; 0 (Python decides: the index is taken, the quirk is its); -1. */
static int start_sets(ReaderObject *self, PyObject *index, PyObject **sets) {
    PyObject *adapter = self->adapter, *type = self->adapter_type;
    sets[0] = blk.ids_get(blk.ids_slot, adapter, type);
    sets[1] = sets[0] == NULL ? NULL : blk.cores_get(blk.cores_slot, adapter, type);
    if (sets[1] == NULL) {
        return -1;
    }
    if (!PySet_CheckExact(sets[0]) || !PySet_CheckExact(sets[1]) || ts_is_negative(index)) {
        return 0;
    }
    int taken = PySet_Contains(sets[1], index);
    return taken < 0 ? -1 : !taken;
}

/* _tool_block for a plain start (fields: block, index, id, name, kind): the block's state
 * made, then kept. 1, 0 (nothing done) or -1. */
static int start_block(ReaderObject *self, PyObject *const *fields) {
    PyObject *sets[2] = {NULL, NULL}, *blocks = NULL, *state = NULL;
    int done = start_sets(self, fields[1], sets);
    int room = done == 1 ? id_room(self, sets[0]) : 0;
    if (room >= 0 && done == 1) {
        PyObject *input = field(fields[0], blk.s_input);
        state = PyErr_Occurred() ? NULL
                                 : PyObject_CallFunctionObjArgs(self->block_type, fields[4],
                                                                fields[2], fields[3],
                                                                input == NULL ? Py_None : input,
                                                                NULL);
        blocks = state == NULL ? NULL
                               : self->blocks_get(self->blocks_slot, self->adapter,
                                                  self->adapter_type);
        done = blocks == NULL ? -1 : (PyDict_CheckExact(blocks) ? 1 : 0);
    } else if (room < 0) {
        done = -1;
    }
    if (done == 1) { /* the changes, in _tool_block's and _core_index's order */
        done = (room == 0 || PySet_Add(sets[0], fields[2]) == 0) &&
                       PyDict_SetItem(blocks, fields[1], state) == 0 &&
                       blk.core_set(self->core_slot, state, fields[1]) == 0 &&
                       PySet_Add(sets[1], fields[1]) == 0
                   ? 1
                   : -1;
    }
    Py_XDECREF(sets[0]);
    Py_XDECREF(sets[1]);
    Py_XDECREF(blocks);
    Py_XDECREF(state);
    return done;
}

/* The three events above, for an event the reader declined: READ_START (a call's block started:
 * *start holds its core index, id and name, new references), READ_ITEMS (*items), READ_NONE
 * (nothing done) or -1. */
static int read_protocol(ReaderObject *self, PyObject *payload, PyObject **start,
                         PyObject **items) {
    if (!blk.configured) {
        return READ_NONE;
    }
    PyObject *kind = field(payload, ev.s_type);
    if (kind == NULL || !PyUnicode_CheckExact(kind)) {
        return PyErr_Occurred() ? -1 : READ_NONE;
    }
    int same = same_text(kind, blk.finish_type);
    if (same != READ_NONE) {
        return same == READ_TAKEN ? read_finish(payload, items) : -1;
    }
    if ((same = same_text(kind, blk.message_type)) != READ_NONE) {
        return same == READ_TAKEN ? read_message(self, payload, items) : -1;
    }
    if ((same = same_text(kind, blk.start_type)) != READ_TAKEN) {
        return same < 0 ? -1 : READ_NONE;
    }
    PyObject *fields[5];
    int plain = start_fields(self, payload, fields);
    if (plain == 1) {
        plain = start_block(self, fields);
    }
    if (plain != 1) {
        return plain < 0 ? -1 : READ_NONE;
    }
    for (int i = 0; i < 3; i++) {
        start[i] = Py_NewRef(fields[i + 1]); /* the core index is the block index here */
    }
    return READ_START;
}

/* -- StitcherBase ---------------------------------------------------------------------------- */

/* The Stitcher's members that the event path reads; the Python body declares them with
 * their class defaults (0, False), which these replace on the native path. */
typedef struct {
    PyObject_HEAD
    PyObject *fragment;     /* _fragment: the adapter's shortcut, or NULL (None) */
    PyObject *assembler;    /* assembler */
    PyObject *understood;   /* _understood: False until an event meant something */
    Py_ssize_t events_read; /* events_read */
    PyObject *text_lane;    /* _text_lane: the core index of the call whose string argument a
                               plain piece of model text continues (TextReader.steady), or NULL */
    Py_ssize_t lane_chars;  /* _lane_chars: the characters that went by the text lane since the
                               reader last counted them (TextReader.skipped) */
    char lane_escape;       /* _lane_escape (T_BOOL): the last of them began an escape */
    PyObject *lane_stops;   /* _lane_stops: bytes, the ASCII characters that end the lane */
    char lane_escapes;      /* _lane_escapes (T_BOOL): a backslash and the next character are
                               one (a JSON string's escapes) */
    char lane_raw;          /* _lane_raw (T_BOOL): the piece is raw text, its arguments its JSON
                               escape */
    char lane_newlines;     /* _lane_newlines (T_BOOL): raw text may hold line breaks */
    char lane_trim;         /* _lane_trim (T_BOOL): a line break ending a piece is held */
    Py_ssize_t lane_lines;  /* _lane_lines: line breaks that went by the lane since the sync */
    Py_ssize_t lane_tail;   /* _lane_tail: characters after the last of them */
    char lane_newline;      /* _lane_newline (T_BOOL): a line break is held (lane_trim) */
    PyObject *lane_decodes; /* _lane_decodes: bytes, the escapes a raw lane takes, as pairs
                               (the character after the backslash, the one it stands for) */
    QuietLane quiet;        /* _quiet_*: pieces of the model's text that give nothing */
    PyObject *stops_of;     /* the _lane_stops that is_stop was made from */
    unsigned char is_stop[128]; /* its ASCII characters */
} StitcherObject;

static int stitcher_traverse(PyObject *op, visitproc visit, void *arg) {
    StitcherObject *self = (StitcherObject *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->fragment);
    Py_VISIT(self->assembler);
    Py_VISIT(self->understood);
    Py_VISIT(self->text_lane);
    Py_VISIT(self->lane_stops);
    Py_VISIT(self->lane_decodes);
    Py_VISIT(self->stops_of);
    return ts_quiet_traverse(&self->quiet, visit, arg);
}

static int stitcher_clear(PyObject *op) {
    StitcherObject *self = (StitcherObject *)op;
    Py_CLEAR(self->fragment);
    Py_CLEAR(self->assembler);
    Py_CLEAR(self->understood);
    Py_CLEAR(self->text_lane);
    Py_CLEAR(self->lane_stops);
    Py_CLEAR(self->lane_decodes);
    Py_CLEAR(self->stops_of);
    ts_quiet_clear(&self->quiet);
    return 0;
}

static void stitcher_dealloc(PyObject *op) { ts_gc_dealloc(op, stitcher_clear); }

static PyObject *stitcher_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    (void)args;
    (void)kwargs;
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    StitcherObject *self = (StitcherObject *)alloc(type, 0);
    if (self != NULL) {
        self->understood = Py_NewRef(Py_False);
    }
    return (PyObject *)self;
}

static PyObject *stitcher_observe(PyObject *op, PyObject *events);

/* `self.assembler.feed_arguments(core, fragment)`: C to C for the native Assembler itself. */
static PyObject *feed_string_run(StitcherObject *self, PyObject *core, PyObject *fragment,
                                 int trusted) {
    PyObject *assembler = self->assembler;
    if (assembler == NULL) {
        PyErr_SetString(PyExc_AttributeError, "assembler");
        return NULL;
    }
    if ((PyObject *)Py_TYPE(assembler) == ev.assembler_class) {
        return ts_feed_string_run(assembler, core, fragment, trusted);
    }
    return PyObject_CallMethod(assembler, "feed_arguments", "OO", core, fragment);
}

static PyObject *feed_arguments(StitcherObject *self, PyObject *core, PyObject *fragment) {
    return feed_string_run(self, core, fragment, 0);
}

/* `len(events) == 1 and type(events[0]) is ArgumentsDelta and self._understood`: 1, 0, -1. */
static int nothing_to_note(StitcherObject *self, PyObject *events) {
    if (!PyList_CheckExact(events) || PyList_Size(events) != 1 ||
        !ts_is_arguments_delta(PyList_GetItem(events, 0))) {
        return 0;
    }
    return self->understood == NULL ? 0 : PyObject_IsTrue(self->understood);
}

/* The events of a fragment fed to the core (a new reference, or NULL): back as they are when
 * nothing needs noting, else through the Python method `method` of the Stitcher, or the C
 * `_observe` when `method` is NULL. */
static PyObject *fed(StitcherObject *self, PyObject *events, PyObject *method) {
    if (events == NULL) {
        return NULL;
    }
    int plain = nothing_to_note(self, events);
    if (plain != 0) {
        if (plain < 0) {
            Py_CLEAR(events);
        }
        return events;
    }
    PyObject *done = method == NULL
                         ? stitcher_observe((PyObject *)self, events)
                         : PyObject_CallMethodObjArgs((PyObject *)self, method, events, NULL);
    Py_DECREF(events);
    return done;
}

/* The shortcut for a fragment the reader took (the caller's references, released here). */
static PyObject *take_fragment(StitcherObject *self, PyObject *core, PyObject *fragment) {
    self->events_read += 1; /* self.events_read += 1 */
    PyObject *events = feed_arguments(self, core, fragment);
    Py_DECREF(core);
    Py_DECREF(fragment);
    return fed(self, events, NULL);
}

/* -- Stitcher._observe ------------------------------------------------------------------------
 *
 * What the Stitcher notes of the events it returns, in C: the same loop as the Python
 * `_observe` (stitch/stitcher.py), which stays the reference and takes anything but a list.
 *
 *     if events and not self._understood:
 *         self._understood = any(type(e) is not StreamWarning for e in events)
 *     for event in events:
 *         if type(event) is ArgumentsDelta: continue
 *         note = _NOTES.get(type(event)) or _note_of(type(event))
 *         note(self, event)
 *     return events
 *
 * The notes themselves are the Python methods of `_NOTES` (handed over by
 * configure_event_path()), called as they are: only the loop and the lookup are C. */

/* `self._understood = any(type(e) is not StreamWarning for e in events)` when events is a
 * non-empty list and nothing was understood yet: 0 or -1. */
static int note_understood(StitcherObject *self, PyObject *events) {
    Py_ssize_t count = PyList_Size(events);
    if (count == 0 || self->understood == NULL) {
        return 0;
    }
    int understood = PyObject_IsTrue(self->understood);
    if (understood != 0) {
        return understood < 0 ? -1 : 0;
    }
    int meant = 0;
    for (Py_ssize_t i = 0; i < count && !meant; i++) {
        meant = Py_TYPE(PyList_GetItem(events, i)) != ev.stream_warning;
    }
    ts_set_ref(&self->understood, meant ? Py_True : Py_False);
    return 0;
}

/* note(self, event) for one event: 0 or -1. */
static int note_event(PyObject *self, PyObject *event) {
    PyObject *kind = (PyObject *)Py_TYPE(event);
    if (ts_is_arguments_delta(event)) {
        return 0; /* the most frequent event, and nothing to note */
    }
    PyObject *note = PyDict_GetItemWithError(ev.notes, kind);
    if (note != NULL) {
        Py_INCREF(note);
    } else if (!PyErr_Occurred()) {
        note = PyObject_CallFunctionObjArgs(ev.note_of, kind, NULL);
    }
    PyObject *done = note == NULL ? NULL : PyObject_CallFunctionObjArgs(note, self, event, NULL);
    Py_XDECREF(note);
    Py_XDECREF(done);
    return done == NULL ? -1 : 0;
}

/* Stitcher._observe(events) */
static PyObject *stitcher_observe(PyObject *op, PyObject *events) {
    StitcherObject *self = (StitcherObject *)op;
    if (!PyList_CheckExact(events) || ev.notes == NULL || self->understood == NULL) {
        return PyObject_CallFunctionObjArgs(ev.python_observe, op, events, NULL);
    }
    if (note_understood(self, events) < 0) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_Size(events); i++) { /* as a list iterator reads it */
        PyObject *event = Py_NewRef(PyList_GetItem(events, i));
        int noted = note_event(op, event);
        Py_DECREF(event);
        if (noted < 0) {
            return NULL;
        }
    }
    return Py_NewRef(events);
}

/* An event the reader declined: a plain block start or message delta in C (read_protocol),
 * with the Stitcher's notes taken by its `_observe`; anything else read by the adapter
 * (`_declined`). */
static PyObject *protocol_event(StitcherObject *self, ReaderObject *reader, PyObject *data) {
    PyObject *start[3] = {NULL, NULL, NULL}, *events = NULL;
    int read = read_protocol(reader, data, start, &events);
    if (read == READ_NONE) {
        return PyObject_CallFunctionObjArgs(ev.declined_feed, (PyObject *)self, data, NULL);
    }
    if (read < 0) {
        return NULL;
    }
    self->events_read += 1; /* self.events_read += 1 */
    if (read == READ_START) { /* the assembler's C start path, or its feed with the dict */
        PyObject *assembler = self->assembler;
        if (assembler == NULL) {
            PyErr_SetString(PyExc_AttributeError, "assembler");
        } else {
            events = ts_feed_start(assembler, start[0], start[1], start[2]);
        }
        for (int i = 0; i < 3; i++) {
            Py_DECREF(start[i]);
        }
    }
    if (events == NULL) {
        return NULL;
    }
    PyObject *observed = stitcher_observe((PyObject *)self, events);
    Py_DECREF(events);
    return observed;
}

/* -- the text lane ---------------------------------------------------------------------------
 *
 * A piece of a model's raw text (text_format) inside a long argument value: the Python
 * Stitcher.feed asks TextReader.lane, which hands a piece that is all arguments of the open
 * call to the core (a JSON string's characters; a raw value's, which need no escaping). When
 * the reader says the open call's body is in a steady lane (`_text_lane`, the call's core
 * index, and the lane as data: `_lane_stops`, `_lane_escapes`; set by the Python Stitcher
 * after each piece it reads, from TextReader.steady), a piece of that lane (lane_piece) is
 * that case for certain, and C does it:
 *
 *     self.events_read += 1
 *     self._lane_chars += len(piece)       # the reader counts them before it reads again,
 *     self._lane_escape = <the piece ends by beginning an escape>   # and takes the escape
 *     events = self.assembler.feed_arguments(self._text_lane, <the piece, or its JSON escape>)
 *     if len(events) == 1 and type(events[0]) is ArgumentsDelta and self._understood:
 *         return events
 *     return self._lane_events(events)     # placed in the text, noted; the lane asked again
 *
 * Any other piece goes to the Python feed, with nothing changed; it first hands the reader
 * what went by the lane (Stitcher._lane_sync), as close does. */

/* What lane_piece makes of a raw piece: its arguments need escaping (`extra` characters
 * more), its line breaks, the characters after the last of them, and whether it ends with
 * one. */
typedef struct {
    Py_ssize_t extra, lines, tail;
    int ends_with_newline;
} RawPiece;

/* The JSON escape of each ASCII character of raw text that has one (0: it is itself). */
static const char JSON_ESCAPE[128] = {
    ['"'] = '"', ['\\'] = '\\', ['\n'] = 'n', ['\t'] = 't', ['\r'] = 'r', ['\b'] = 'b', ['\f'] = 'f',
};

/* The JSON escape of one character of raw text, or 0 when it is itself. */
static inline char raw_escape(unsigned char c) { return c < 0x80 ? JSON_ESCAPE[c] : 0; }

/* The escapes a raw lane takes (Steady.decodes): pairs of the character after the backslash
 * and the one that escape stands for. */
typedef struct {
    const char *pairs;
    Py_ssize_t size;
} Decodes;

/* The character the escape of `c` stands for, or -1 when the lane does not take it. */
static int decoded(const Decodes *d, unsigned char c) {
    for (Py_ssize_t k = 0; k + 1 < d->size; k += 2) {
        if ((unsigned char)d->pairs[k] == c) {
            return (unsigned char)d->pairs[k + 1];
        }
    }
    return -1;
}

/* Write raw character `c` as JSON writes it in a string; the new end of `out`. */
static Py_ssize_t put_json(char *out, Py_ssize_t n, char c) {
    char escape = raw_escape((unsigned char)c);
    if (escape) {
        out[n++] = '\\';
        out[n++] = escape;
    } else {
        out[n++] = c;
    }
    return n;
}

/* The arguments of a raw piece (`text`, UTF-8, `size` bytes): its JSON escape, as
 * literals.json_string escapes raw text, after a held line break if `held`, without its own
 * last line break if `trim` holds it; with decodes, its escapes taken as their characters
 * (the first character ends an escape if `escaped`; a backslash at the end writes nothing).
 * A new str (possibly empty), or NULL. */
static PyObject *raw_arguments(const char *text, Py_ssize_t size, const RawPiece *raw, int held,
                               int trim, const Decodes *d, int escaped) {
    if (trim && raw->ends_with_newline) {
        size -= 1;
    }
    char small[256]; /* most pieces: no allocation */
    size_t room = (size_t)(size + raw->extra + 2);
    char *out = room <= sizeof(small) ? small : PyMem_Malloc(room);
    if (out == NULL) {
        return PyErr_NoMemory();
    }
    Py_ssize_t n = 0;
    if (held) {
        out[n++] = '\\';
        out[n++] = 'n';
    }
    for (Py_ssize_t i = 0; i < size; i++) {
        if (escaped && i == 0) {
            n = put_json(out, n, (char)decoded(d, (unsigned char)text[0]));
        } else if (d->size && text[i] == '\\') {
            if (++i < size) {
                n = put_json(out, n, (char)decoded(d, (unsigned char)text[i]));
            }
        } else {
            n = put_json(out, n, text[i]);
        }
    }
    PyObject *result = PyUnicode_DecodeUTF8(out, n, "strict");
    if (out != small) {
        PyMem_Free(out);
    }
    return result;
}

/* 1 if `piece`, an exact str, is non-empty and belongs to the lane (bodies.Steady): no control
 * character and none of `stops`, except, with `escapes`, as the character after a backslash
 * (the core judges the escape; after an escape's backslash if *escape is set), perhaps a
 * backslash at its end that begins one (*escape then set); with `raw` and `newlines`, line
 * breaks, tabs and carriage returns allowed (*raw says how many and where). *fragment is then
 * the arguments it gives (a new reference: the piece, or with `raw` its JSON escape; NULL
 * when a raw piece gives none: a held line break only); 0 if not; -1 on error. Read in UTF-8,
 * where ASCII characters are single bytes, never inside a longer sequence. */
static int lane_piece(StitcherObject *self, PyObject *piece, int *escape, RawPiece *raw,
                      PyObject **fragment) {
    if (self->lane_stops != self->stops_of) { /* the lane changed: its stops as a table */
        char *stops;
        Py_ssize_t count;
        if (self->lane_stops == NULL ||
            PyBytes_AsStringAndSize(self->lane_stops, &stops, &count) < 0) {
            PyErr_Clear(); /* not bytes: the Python path decides */
            return 0;
        }
        memset(self->is_stop, 0, sizeof(self->is_stop));
        for (Py_ssize_t k = 0; k < count; k++) {
            self->is_stop[(unsigned char)stops[k] & 0x7F] = 1;
        }
        ts_set_ref(&self->stops_of, self->lane_stops);
    }
    const unsigned char *is_stop = self->is_stop;
    Py_ssize_t size;
    const char *text = PyUnicode_AsUTF8AndSize(piece, &size);
    if (text == NULL) {
        PyErr_Clear(); /* lone surrogates: the Python path decides */
        return 0;
    }
    if (size == 0) {
        return 0;
    }
    int escapes = self->lane_escapes, raw_text = self->lane_raw, breaks = self->lane_newlines;
    Decodes d = {NULL, 0};
    if (raw_text && self->lane_decodes != NULL &&
        PyBytes_AsStringAndSize(self->lane_decodes, (char **)&d.pairs, &d.size) < 0) {
        PyErr_Clear(); /* not bytes: the Python path decides */
        return 0;
    }
    Py_ssize_t i = 0;
    if (*escape) { /* the piece ends the escape the last one began */
        if ((unsigned char)text[0] < 0x20 || (d.size && decoded(&d, (unsigned char)text[0]) < 0)) {
            return 0;
        }
        raw->extra += d.size ? 1 : 0;
        raw->tail += 1;
        i = 1;
    }
    int open = 0;
    for (; i < size; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\\' && d.size) { /* an escape the lane takes: its character, escaped */
            if (++i == size) {
                open = 1;
            } else if (decoded(&d, (unsigned char)text[i]) < 0) {
                return 0;
            }
            raw->extra++;
            raw->tail += 2 - open;
            continue;
        }
        if (c == '\\' && escapes) { /* an escape: the next character is the string's */
            if (++i == size) {
                open = 1;
            } else if ((unsigned char)text[i] < 0x20) {
                return 0;
            }
        } else if (c < 0x80 && is_stop[c]) {
            return 0;
        } else if (c < 0x20 && !(breaks && (c == '\n' || c == '\t' || c == '\r'))) {
            return 0;
        } else if (raw_text && raw_escape(c)) {
            raw->extra++;
            if (c == '\n') {
                raw->lines++;
                raw->tail = 0;
                continue;
            }
        }
        if ((c & 0xC0) != 0x80) { /* a character starts here */
            raw->tail++;
        }
    }
    raw->ends_with_newline = text[size - 1] == '\n';
    int held = self->lane_newline, trim = self->lane_trim;
    if (raw->extra == 0 && !held) {
        *fragment = Py_NewRef(piece);
    } else if (trim && raw->ends_with_newline && size == 1 && !held) {
        *fragment = NULL; /* a line break alone: held, nothing yet */
    } else {
        *fragment = raw_arguments(text, size, raw, held, trim, &d, *escape && d.size);
        if (*fragment == NULL) {
            return -1;
        }
        if (PyUnicode_GetLength(*fragment) == 0) { /* an escape's backslash alone: nothing yet */
            Py_CLEAR(*fragment);
        }
    }
    *escape = open;
    return 1;
}

static PyObject *text_lane(StitcherObject *self, PyObject *piece, const RawPiece *raw,
                           PyObject *fragment) {
    Py_ssize_t chars = PyUnicode_GetLength(piece);
    if (chars < 0) {
        Py_XDECREF(fragment);
        return NULL;
    }
    self->events_read += 1;
    self->lane_chars += chars;
    if (raw->lines) {
        self->lane_lines += raw->lines;
        self->lane_tail = raw->tail;
    } else {
        self->lane_tail += raw->tail;
    }
    if (self->lane_trim) {
        self->lane_newline = (char)raw->ends_with_newline;
    }
    if (fragment == NULL) {
        return PyList_New(0); /* a held line break, an escape's backslash: the reader gives nothing */
    }
    /* A raw lane's fragment is JSON string content it wrote itself: valid as it is. */
    PyObject *events = feed_string_run(self, self->text_lane, fragment, self->lane_raw);
    Py_DECREF(fragment);
    return fed(self, events, ev.s_lane_events);
}

/* Stitcher.feed(data) */
static PyObject *feed_data(PyObject *op, PyObject *data);

static PyObject *stitcher_feed(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
    static const char *const names[] = {"data"};
    PyObject *data;
    if (ts_parse_params("feed", args, nargs, kwnames, names, 1, &data) < 0) {
        return NULL;
    }
    return feed_data(op, data);
}

static PyObject *feed_data(PyObject *op, PyObject *data) {
    if (ev.python_feed == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "toolstitch._native: configure_event_path() has not been called");
        return NULL;
    }
    StitcherObject *self = (StitcherObject *)op;
    if (self->text_lane != NULL && self->text_lane != Py_None && PyUnicode_CheckExact(data)) {
        PyObject *fragment = NULL;
        RawPiece raw = {0, 0, 0, 0};
        int escape = self->lane_escape;
        int lane = lane_piece(self, data, &escape, &raw, &fragment);
        if (lane < 0) {
            return NULL;
        }
        if (lane) {
            self->lane_escape = (char)escape;
            return text_lane(self, data, &raw, fragment);
        }
    }
    if (self->quiet.markers != NULL && self->quiet.markers != Py_None &&
        PyUnicode_CheckExact(data)) { /* the quiet lane: held back, read with the next piece */
        int quiet = ts_quiet_piece(&self->quiet, data);
        if (quiet < 0) {
            return NULL;
        }
        if (quiet) {
            self->events_read += 1;
            return PyList_New(0);
        }
    }
    PyObject *reader = self->fragment;
    if (reader != NULL && is_bound(reader) && PyDict_CheckExact(data)) {
        PyObject *core = NULL, *fragment = NULL;
        int read = reader_read((ReaderObject *)reader, data, &core, &fragment);
        if (read < 0) {
            return NULL;
        }
        if (read == READ_TAKEN) {
            return take_fragment((StitcherObject *)op, core, fragment);
        }
        if (read == READ_QUIET) { /* self.events_read += 1; return [] */
            ((StitcherObject *)op)->events_read += 1;
            return PyList_New(0);
        }
        if (read == READ_NONE) { /* declined, having done nothing */
            return protocol_event((StitcherObject *)op, (ReaderObject *)reader, data);
        }
    }
    return PyObject_CallFunctionObjArgs(ev.python_feed, op, data, NULL);
}

PyObject *ts_native_feed_of(PyObject *feed) {
    if (!PyCFunction_Check(feed) || PyCFunction_GetFunction(feed) != (PyCFunction)(void (*)(void))stitcher_feed) {
        return NULL;
    }
    PyObject *self = PyCFunction_GetSelf(feed);
    return self != NULL && ev.stitcher_type != NULL && PyObject_TypeCheck(self, ev.stitcher_type) ? self : NULL;
}

PyObject *ts_stitcher_feed(PyObject *stitcher, PyObject *piece) {
    return feed_data(stitcher, piece);
}

static PyMethodDef stitcher_methods[] = {
    {"_observe", (PyCFunction)stitcher_observe, METH_O,
     "Note what the result keeps of `events` (the Python notes, called from C); return them."},
    {"feed", (PyCFunction)(void (*)(void))stitcher_feed, METH_FASTCALL | METH_KEYWORDS,
     "Take the next piece of the stream (bytes, or one event); return its events (the C "
     "event path)."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef stitcher_members[] = {
    {"_fragment", T_OBJECT, offsetof(StitcherObject, fragment), 0, NULL},
    {"assembler", T_OBJECT_EX, offsetof(StitcherObject, assembler), 0, NULL},
    {"_understood", T_OBJECT_EX, offsetof(StitcherObject, understood), 0, NULL},
    {"events_read", T_PYSSIZET, offsetof(StitcherObject, events_read), 0, NULL},
    {"_text_lane", T_OBJECT, offsetof(StitcherObject, text_lane), 0, NULL},
    {"_lane_chars", T_PYSSIZET, offsetof(StitcherObject, lane_chars), 0, NULL},
    {"_lane_escape", T_BOOL, offsetof(StitcherObject, lane_escape), 0, NULL},
    {"_lane_stops", T_OBJECT, offsetof(StitcherObject, lane_stops), 0, NULL},
    {"_lane_escapes", T_BOOL, offsetof(StitcherObject, lane_escapes), 0, NULL},
    {"_lane_raw", T_BOOL, offsetof(StitcherObject, lane_raw), 0, NULL},
    {"_lane_newlines", T_BOOL, offsetof(StitcherObject, lane_newlines), 0, NULL},
    {"_lane_trim", T_BOOL, offsetof(StitcherObject, lane_trim), 0, NULL},
    {"_lane_lines", T_PYSSIZET, offsetof(StitcherObject, lane_lines), 0, NULL},
    {"_lane_tail", T_PYSSIZET, offsetof(StitcherObject, lane_tail), 0, NULL},
    {"_lane_newline", T_BOOL, offsetof(StitcherObject, lane_newline), 0, NULL},
    {"_lane_decodes", T_OBJECT, offsetof(StitcherObject, lane_decodes), 0, NULL},
    {"_quiet_markers", T_OBJECT, offsetof(StitcherObject, quiet.markers), 0, NULL},
    {"_quiet_tail", T_OBJECT, offsetof(StitcherObject, quiet.tail), 0, NULL},
    {"_quiet_stops", T_OBJECT, offsetof(StitcherObject, quiet.stops), 0, NULL},
    {"_quiet_pending", T_OBJECT, offsetof(StitcherObject, quiet.pending), 0, NULL},
    {"_quiet_room", T_PYSSIZET, offsetof(StitcherObject, quiet.room), 0, NULL},
    {"_quiet_plain", T_BYTE, offsetof(StitcherObject, quiet.plain), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot stitcher_slots[] = {
    {Py_tp_doc, "The members of the Stitcher that the event fast path reads, and its feed."},
    {Py_tp_new, stitcher_new},
    {Py_tp_dealloc, stitcher_dealloc},
    {Py_tp_traverse, stitcher_traverse},
    {Py_tp_clear, stitcher_clear},
    {Py_tp_methods, stitcher_methods},
    {Py_tp_members, stitcher_members},
    {0, NULL},
};

static PyType_Spec stitcher_spec = {
    "toolstitch._native.StitcherBase", sizeof(StitcherObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, stitcher_slots,
};

/* -- configure_event_path() ----------------------------------------------------------------- */

static PyObject *configure_event_path(PyObject *module, PyObject *args, PyObject *kwargs) {
    (void)module;
    static char *kwlist[] = {"python_feed", "declined_feed",  "assembler_class",
                             "python_observe", "notes", "note_of", "stream_warning", NULL};
    PyObject *python_feed, *declined_feed, *assembler_class, *python_observe, *notes, *note_of;
    PyObject *stream_warning;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$OOO!OO!OO!:configure_event_path", kwlist,
                                     &python_feed, &declined_feed, &PyType_Type,
                                     &assembler_class, &python_observe, &PyDict_Type, &notes,
                                     &note_of, &PyType_Type, &stream_warning)) {
        return NULL;
    }
    if (!PyCallable_Check(python_feed) || !PyCallable_Check(declined_feed) ||
        !PyCallable_Check(python_observe) || !PyCallable_Check(note_of)) {
        PyErr_SetString(PyExc_TypeError,
                        "python_feed, declined_feed, python_observe and note_of must be callable");
        return NULL;
    }
    ts_set_ref(&ev.python_observe, python_observe);
    ts_set_ref(&ev.notes, notes);
    ts_set_ref(&ev.note_of, note_of);
    ts_set_ref((PyObject **)&ev.stream_warning, stream_warning);
    ts_set_ref(&ev.python_feed, python_feed);
    ts_set_ref(&ev.declined_feed, declined_feed);
    ts_set_ref(&ev.assembler_class, assembler_class);
    Py_RETURN_NONE;
}

static int block_names(void) {
    int ok = ts_intern(&blk.s_block, "content_block") == 0 && ts_intern(&blk.s_id, "id") == 0 &&
             ts_intern(&blk.s_name, "name") == 0 && ts_intern(&blk.s_input, "input") == 0 &&
             ts_intern(&blk.s_caller, "caller") == 0 &&
             ts_intern(&blk.s_reason, "stop_reason") == 0 && ts_intern(&blk.s_usage, "usage") == 0 &&
             ts_intern(&blk.s_limits, "limits") == 0 && ts_intern(&blk.s_max_calls, "max_calls") == 0 &&
             ts_intern(&blk.s_message, "message") == 0 && ts_intern(&blk.s_content, "content") == 0;
    return ok ? 0 : -1;
}

/* The `name` slot of `type` into *slot, with its __get__ in *get. 0 or -1. */
static int block_slot(PyObject *type, const char *name, PyObject **slot, descrgetfunc *get) {
    PyObject *key = PyUnicode_InternFromString(name);
    PyObject *descr = key == NULL ? NULL : ts_slot_of(type, key);
    Py_XDECREF(key);
    if (descr == NULL) {
        return -1;
    }
    ts_set_ref(slot, descr);
    Py_DECREF(descr);
    *get = (descrgetfunc)PyType_GetSlot(Py_TYPE(*slot), Py_tp_descr_get);
    return 0;
}

static PyObject *configure_block_events(PyObject *module, PyObject *args, PyObject *kwargs) {
    (void)module;
    static char *kwlist[] = {"start_type", "finish_type", "message_type", "client_types",
                             "finish",     "usage",       "adapter_type", "block_type",
                             NULL};
    PyObject *o[7], *message_type;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$UUUO!OOO!O!:configure_block_events", kwlist,
                                     &o[0], &o[1], &message_type, &PyFrozenSet_Type, &o[2],
                                     &o[3], &o[4], &PyType_Type, &o[5], &PyType_Type, &o[6])) {
        return NULL;
    }
    if (!PyCallable_Check(o[3]) || !PyCallable_Check(o[4])) {
        PyErr_SetString(PyExc_TypeError, "finish and usage must be callable");
        return NULL;
    }
    blk.configured = 0;
    PyObject *core = NULL;
    descrgetfunc unused;
    if (block_names() < 0 || block_slot(o[5], "_ids", &blk.ids_slot, &blk.ids_get) < 0 ||
        block_slot(o[5], "_cores", &blk.cores_slot, &blk.cores_get) < 0 ||
        block_slot(o[5], "_messages", &blk.messages_slot, &blk.messages_get) < 0 ||
        block_slot(o[6], "core", &core, &unused) < 0) {
        Py_XDECREF(core);
        return NULL;
    }
    blk.core_set = (descrsetfunc)PyType_GetSlot(Py_TYPE(core), Py_tp_descr_set);
    blk.messages_set = (descrsetfunc)PyType_GetSlot(Py_TYPE(blk.messages_slot), Py_tp_descr_set);
    ts_set_ref(&blk.message_type, message_type);
    Py_DECREF(core);
    ts_set_ref(&blk.start_type, o[0]);
    ts_set_ref(&blk.finish_type, o[1]);
    ts_set_ref(&blk.client_types, o[2]);
    ts_set_ref(&blk.finish, o[3]);
    ts_set_ref(&blk.usage, o[4]);
    blk.configured = 1;
    Py_RETURN_NONE;
}

static PyMethodDef event_functions[] = {
    {"configure_block_events", (PyCFunction)(void (*)(void))configure_block_events,
     METH_VARARGS | METH_KEYWORDS,
     "Hand the event path the block start's and the message delta's names and makers "
     "(adapters/anthropic.py calls it once)."},
    {"configure_event_path", (PyCFunction)(void (*)(void))configure_event_path,
     METH_VARARGS | METH_KEYWORDS,
     "Hand the event fast path the Python Stitcher.feed and the native Assembler "
     "(stitch/stitcher.py calls it once)."},
    {NULL, NULL, 0, NULL},
};

/* -- module init ----------------------------------------------------------------------------- */

static int intern_names(void) {
    int ok = ts_intern(&ev.s_type, "type") == 0 && ts_intern(&ev.s_delta, "delta") == 0 &&
             ts_intern(&ev.s_index, "index") == 0 && ts_intern(&ev.s_blocks, "_blocks") == 0 &&
             ts_intern(&ev.s_client, "client") == 0 && ts_intern(&ev.s_streamed, "streamed") == 0 &&
             ts_intern(&ev.s_core, "core") == 0 &&
             ts_intern(&ev.s_thinking, "_thinking") == 0 &&
             ts_intern(&ev.s_records, "records") == 0 &&
             ts_intern(&ev.s_lane_events, "_lane_events") == 0;
    return ok ? 0 : -1;
}

int ts_eventpath_init(PyObject *module) {
    if (intern_names() < 0 || ts_add_type(module, &reader_spec, "BlockFragments", &ev.reader_type) < 0 ||
        ts_add_type(module, &stitcher_spec, "StitcherBase", &ev.stitcher_type) < 0 ||
        PyModule_AddFunctions(module, event_functions) < 0) {
        return -1;
    }
    return 0;
}
