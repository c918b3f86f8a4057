#ifndef TWOSCALE_CZLIB_SHIM_H
#define TWOSCALE_CZLIB_SHIM_H
#include <zlib.h>
#endif
