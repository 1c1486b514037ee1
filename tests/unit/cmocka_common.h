/* cmocka needs these before it; every unit test includes this first. */
#ifndef GDR_CMOCKA_COMMON_H
#define GDR_CMOCKA_COMMON_H
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#endif
