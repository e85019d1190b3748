#ifndef AUTHKEYD_CFIDO2_SHIM_H
#define AUTHKEYD_CFIDO2_SHIM_H
#include <fido.h>
#include <fido/bio.h>
#include <fido/config.h>
#include <fido/credman.h>
#include <fido/eddsa.h>
#include <fido/es256.h>
#include <fido/rs256.h>
#endif
