/* error.c — the HY_ERROR domain. */
#include "hybrid.h"

G_DEFINE_QUARK (hy-error-quark, hy_error)
