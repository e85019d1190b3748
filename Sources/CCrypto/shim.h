#ifndef AUTHKEYD_CCRYPTO_SHIM_H
#define AUTHKEYD_CCRYPTO_SHIM_H
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* Macros built from other macros, which Swift cannot import, as constants it can. */
static const int authkeyd_EVP_PKEY_PUBLIC_KEY = EVP_PKEY_PUBLIC_KEY;
static const int authkeyd_EVP_PKEY_KEYPAIR = EVP_PKEY_KEYPAIR;

/* OSSL_PARAM_BLD keeps parameter names by reference until OSSL_PARAM_BLD_to_param:
 * they must outlive the call, which Swift's temporary C strings do not. */
static const char *const authkeyd_PARAM_GROUP_NAME = OSSL_PKEY_PARAM_GROUP_NAME;
static const char *const authkeyd_PARAM_PUB_KEY = OSSL_PKEY_PARAM_PUB_KEY;
static const char *const authkeyd_PARAM_PRIV_KEY = OSSL_PKEY_PARAM_PRIV_KEY;
static const char *const authkeyd_CURVE_P256 = "prime256v1";
static const char *const authkeyd_PARAM_RSA_N = OSSL_PKEY_PARAM_RSA_N;
static const char *const authkeyd_PARAM_RSA_E = OSSL_PKEY_PARAM_RSA_E;
/* EVP_KDF "HKDF" and its parameters, for the same reason: OSSL_PARAM_construct_*
 * keeps the name (and a UTF-8 value) by reference. */
static const char *const authkeyd_KDF_HKDF = OSSL_KDF_NAME_HKDF;
static const char *const authkeyd_KDF_PARAM_DIGEST = OSSL_KDF_PARAM_DIGEST;
static const char *const authkeyd_KDF_PARAM_KEY = OSSL_KDF_PARAM_KEY;
static const char *const authkeyd_KDF_PARAM_SALT = OSSL_KDF_PARAM_SALT;
static const char *const authkeyd_KDF_PARAM_INFO = OSSL_KDF_PARAM_INFO;
static const char *const authkeyd_DIGEST_SHA256 = OSSL_DIGEST_NAME_SHA2_256;
#endif
