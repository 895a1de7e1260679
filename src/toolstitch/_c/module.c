/* toolstitch._native: the C hot path (docs/native.md). Pure Python is the reference. */
#include <Python.h>

#include "eventpath.h"
#include "fastpath.h"
#include "pump.h"
#include "scanner.h"

static int native_exec(PyObject *module) {
    if (ts_scanner_init(module) < 0 || ts_fastpath_init(module) < 0 ||
        ts_eventpath_init(module) < 0 || ts_pump_init(module) < 0) {
        return -1;
    }
    return 0;
}

static PyModuleDef_Slot native_slots[] = {
    {Py_mod_exec, (void *)native_exec},
    {0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT,
    "toolstitch._native",
    "The C hot path of toolstitch (docs/native.md); pure Python is the reference.",
    0,
    NULL,
    native_slots,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__native(void) { return PyModuleDef_Init(&native_module); }
