#ifndef AUTHKEYD_CUDEV_SHIM_H
#define AUTHKEYD_CUDEV_SHIM_H
#include <libudev.h>
#endif
