/*
 * OpenSSH's security-key middleware API, version 10 (OpenSSH 9.1 to 9.9),
 * declared from its documentation (PROTOCOL.u2f, sk-api.h) for the
 * provider authkeyd ships: the structs must be laid out exactly as
 * OpenSSH lays them out, field for field, since OpenSSH reads and frees
 * what the provider returns.
 */
#ifndef AUTHKEYD_SK_API_H
#define AUTHKEYD_SK_API_H

#include <stddef.h>
#include <stdint.h>

/* sk_api_version(): the major version in the high 16 bits. */
#define SSH_SK_VERSION_MAJOR 0x000a0000
#define SSH_SK_VERSION_MAJOR_MASK 0xffff0000

/* Flags, as asked (enroll, sign) and as answered (sign: the authenticator data's flags byte). */
#define SSH_SK_USER_PRESENCE_REQD 0x01
#define SSH_SK_USER_VERIFICATION_REQD 0x04
#define SSH_SK_FORCE_OPERATION 0x10
#define SSH_SK_RESIDENT_KEY 0x20

/* Algorithms. */
#define SSH_SK_ECDSA 0x00
#define SSH_SK_ED25519 0x01

/* Errors; 0 is success. */
#define SSH_SK_ERR_GENERAL -1
#define SSH_SK_ERR_UNSUPPORTED -2
#define SSH_SK_ERR_PIN_REQUIRED -3
#define SSH_SK_ERR_DEVICE_NOT_FOUND -4
#define SSH_SK_ERR_CREDENTIAL_EXISTS -5

/* Every pointer below is malloc'd by the provider and freed by OpenSSH. */
struct sk_enroll_response {
    uint8_t flags;
    uint8_t *public_key;        /* SEC1 uncompressed P-256 point, or 32 Ed25519 bytes */
    size_t public_key_len;
    uint8_t *key_handle;        /* the credential id */
    size_t key_handle_len;
    uint8_t *signature;         /* the attestation statement's */
    size_t signature_len;
    uint8_t *attestation_cert;  /* DER, the first of x5c */
    size_t attestation_cert_len;
    uint8_t *authdata;          /* the authenticator data, raw */
    size_t authdata_len;
};

struct sk_sign_response {
    uint8_t flags;
    uint32_t counter;
    uint8_t *sig_r;             /* ECDSA r, or the 64-byte Ed25519 signature */
    size_t sig_r_len;
    uint8_t *sig_s;             /* ECDSA s; none for Ed25519 */
    size_t sig_s_len;
};

struct sk_resident_key {
    uint32_t alg;
    size_t slot;
    char *application;
    struct sk_enroll_response key;
    uint8_t flags;
    uint8_t *user_id;
    size_t user_id_len;
};

/* Options: a NULL-terminated array; "device" and "user" are the names used. */
struct sk_option {
    char *name;
    char *value;
    uint8_t required;
};

#endif
