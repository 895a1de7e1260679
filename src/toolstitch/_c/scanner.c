/* Scanner: placeholder until the native scanner lands; every fragment hands over. */
#include "scanner.h"

int ts_scanner_init(PyObject *module) { (void)module; return 0; }
int ts_scanner_is_native(PyObject *module, PyObject *obj) { (void)module; (void)obj; return 0; }
int ts_scan(PyObject *scanner, PyObject *fragment) { (void)scanner; (void)fragment; return TS_HANDOVER; }
