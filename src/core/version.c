/* version.c — the version of the core library as loaded at run time. */
#include "shape/version.h"

const char *shape_version(void) { return SHAPE_VERSION; }
