/* Pump: the loop of `for event in stitch(...)` in C (docs/native.md, "The pump").
 *
 * The pure-Python reference is `toolstitch.stitch.pump.Pump`; both are built with the same
 * three things and own everything they use:
 *
 *     Pump(chunks, feed, end)
 *
 * `chunks` is the source's iterator, `feed(piece)` returns the events a piece caused (a list)
 * and `end()` the events of the source's end. `next(pump)` hands out the events one at a time,
 * pulling the next piece whenever it has none left, and calling `end()` once when the source
 * is exhausted; after that it stops. `stop()` drops the source: the next pull is its end.
 *
 * The only shortcut: when `feed` is the C `feed` of a native Stitcher (StitcherBase), the
 * piece goes to it C to C, without a Python call. Nothing else is read from any object. */
#include "pump.h"

#include <structmember.h>

#include "eventpath.h"
#include "fastpath.h"

typedef struct {
    PyObject_HEAD
    PyObject *chunks; /* the source's iterator; NULL once ended or stopped */
    PyObject *feed;   /* feed(piece) -> events */
    PyObject *end;    /* end() -> events */
    PyObject *native; /* the native Stitcher whose C feed `feed` is, or NULL (borrowed from feed) */
    PyObject *events; /* the events not yet handed out (a list), or NULL */
    Py_ssize_t at;    /* the next of them to hand out */
    Py_ssize_t size;  /* how many there are */
    char done;        /* end() was called */
} PumpObject;

static PyTypeObject *pump_type = NULL;

static int pump_traverse(PyObject *op, visitproc visit, void *arg) {
    PumpObject *self = (PumpObject *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->chunks);
    Py_VISIT(self->feed);
    Py_VISIT(self->end);
    Py_VISIT(self->events);
    return 0;
}

static int pump_clear(PyObject *op) {
    PumpObject *self = (PumpObject *)op;
    Py_CLEAR(self->chunks);
    Py_CLEAR(self->feed);
    Py_CLEAR(self->end);
    Py_CLEAR(self->events);
    self->native = NULL;
    return 0;
}

static void pump_dealloc(PyObject *op) { ts_gc_dealloc(op, pump_clear); }

static PyObject *pump_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"chunks", "feed", "end", NULL};
    PyObject *chunks, *feed, *end;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO:Pump", kwlist, &chunks, &feed, &end)) {
        return NULL;
    }
    if (!PyIter_Check(chunks) || !PyCallable_Check(feed) || !PyCallable_Check(end)) {
        PyErr_SetString(PyExc_TypeError, "Pump(chunks, feed, end): an iterator, two callables");
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    PumpObject *self = (PumpObject *)alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->chunks = Py_NewRef(chunks);
    self->feed = Py_NewRef(feed);
    self->end = Py_NewRef(end);
    self->native = ts_native_feed_of(feed);
    return (PyObject *)self;
}

/* The events of the next piece (or of the end), as a list; NULL with an exception set. */
static PyObject *pull(PumpObject *self) {
    PyObject *piece = self->chunks != NULL ? PyIter_Next(self->chunks) : NULL;
    PyObject *events;
    if (piece != NULL) {
        events = self->native != NULL ? ts_stitcher_feed(self->native, piece)
                                      : PyObject_CallFunctionObjArgs(self->feed, piece, NULL);
        Py_DECREF(piece);
    } else {
        if (PyErr_Occurred()) {
            return NULL; /* the source raised: it reaches the reader; the pump is unchanged */
        }
        self->done = 1;
        Py_CLEAR(self->chunks);
        events = PyObject_CallNoArgs(self->end);
    }
    if (events == NULL || PyList_CheckExact(events)) {
        return events;
    }
    PyObject *list = PySequence_List(events);
    Py_DECREF(events);
    return list;
}

static PyObject *pump_next(PyObject *op) {
    PumpObject *self = (PumpObject *)op;
    while (self->at >= self->size) {
        Py_CLEAR(self->events);
        self->at = self->size = 0;
        if (self->done) {
            return NULL; /* StopIteration */
        }
        PyObject *events = pull(self);
        if (events == NULL) {
            return NULL;
        }
        self->events = events;
        self->size = PyList_Size(events);
    }
    PyObject *event = PyList_GetItem(self->events, self->at++);
    return Py_XNewRef(event);
}

static PyObject *pump_stop(PyObject *op, PyObject *unused) {
    (void)unused;
    Py_CLEAR(((PumpObject *)op)->chunks);
    Py_RETURN_NONE;
}

static PyObject *pump_pending(PyObject *op, void *closure) {
    (void)closure;
    PumpObject *self = (PumpObject *)op;
    return PyLong_FromSsize_t(self->size - self->at);
}

static PyObject *pump_ended(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(((PumpObject *)op)->done);
}

static PyMethodDef pump_methods[] = {
    {"stop", pump_stop, METH_NOARGS, "Drop the source: the next pull is its end."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef pump_getset[] = {
    {"pending", pump_pending, NULL, "How many events are waiting to be handed out.", NULL},
    {"ended", pump_ended, NULL, "Whether end() was called.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot pump_slots[] = {
    {Py_tp_doc, "Pump(chunks, feed, end)\n--\n\n"
                "Hand out the events of `feed(piece)` for each piece of `chunks`, then those of "
                "`end()` (the pure-Python reference: toolstitch.stitch.pump.Pump)."},
    {Py_tp_new, pump_new},
    {Py_tp_dealloc, pump_dealloc},
    {Py_tp_traverse, pump_traverse},
    {Py_tp_clear, pump_clear},
    {Py_tp_iter, PyObject_SelfIter},
    {Py_tp_iternext, pump_next},
    {Py_tp_methods, pump_methods},
    {Py_tp_getset, pump_getset},
    {0, NULL},
};

static PyType_Spec pump_spec = {
    "toolstitch._native.Pump", sizeof(PumpObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, pump_slots,
};

int ts_pump_init(PyObject *module) { return ts_add_type(module, &pump_spec, "Pump", &pump_type); }
