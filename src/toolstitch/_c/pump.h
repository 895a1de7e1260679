/* Pump: the loop of `for event in stitch(...)` in C (pump.c). */
#ifndef TOOLSTITCH_PUMP_H
#define TOOLSTITCH_PUMP_H

#include <Python.h>

/* Adds Pump to the module (module.c's exec slot). 0 or -1 with an exception set. */
int ts_pump_init(PyObject *module);

#endif
