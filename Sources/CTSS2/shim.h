#ifndef AUTHKEYD_CTSS2_SHIM_H
#define AUTHKEYD_CTSS2_SHIM_H
/* tpm2-tss's ESAPI, its TCTI loader, marshalling and error strings
 * (Debian's libtss2-dev), and the few TPM structures authkeyd fills: the
 * nested unions of TPM2B_PUBLIC and TPMT_SIGNATURE import into Swift as
 * tuples and anonymous unions, which are clearer set here in C, field by
 * field, as TPM 2.0 Part 2 (Structures) names them. */
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>

/* tpm2-tss's response codes are casts Swift cannot import: the few
 * authkeyd reports itself, for what it checks before a call. */
static const TSS2_RC authkeyd_tpm_rc_bad_value = TSS2_ESYS_RC_BAD_VALUE;
static const TSS2_RC authkeyd_tpm_rc_general_failure = TSS2_ESYS_RC_GENERAL_FAILURE;
static const TSS2_RC authkeyd_tpm_rc_bad_size = TSS2_MU_RC_BAD_SIZE;

/* The storage primary under the owner hierarchy: a restricted P-256
 * decryption key whose children are wrapped with AES-128-CFB (the TCG's
 * "SRK" template for ECC). The same template gives the same key on the
 * same TPM each time (the owner seed derives it), so it is made again at
 * each start instead of being kept. noDA: a key with an empty authValue
 * has nothing to guess. */
static inline void authkeyd_tpm_storage_template(TPM2B_PUBLIC *template) {
    memset(template, 0, sizeof *template);
    TPMT_PUBLIC *area = &template->publicArea;
    area->type = TPM2_ALG_ECC;
    area->nameAlg = TPM2_ALG_SHA256;
    area->objectAttributes = TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_FIXEDTPM
        | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA;
    area->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
    area->parameters.eccDetail.symmetric.keyBits.aes = 128;
    area->parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
    area->parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    area->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    area->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
}

/* A credential's key: P-256, ECDSA with SHA-256 only (COSE ES256), made in
 * the TPM (sensitiveDataOrigin) and bound to it and to its parent
 * (fixedTPM, fixedParent): its private part leaves the TPM only wrapped
 * by the storage primary. */
static inline void authkeyd_tpm_es256_template(TPM2B_PUBLIC *template) {
    memset(template, 0, sizeof *template);
    TPMT_PUBLIC *area = &template->publicArea;
    area->type = TPM2_ALG_ECC;
    area->nameAlg = TPM2_ALG_SHA256;
    area->objectAttributes = TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT
        | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA;
    area->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
    area->parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
    area->parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
    area->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    area->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
}

/* A secret kept by the TPM (a sealed data object: keyedHash, no scheme):
 * it can be read back (TPM2_Unseal) only through the TPM that made it,
 * under the same primary. */
static inline void authkeyd_tpm_sealed_template(TPM2B_PUBLIC *template) {
    memset(template, 0, sizeof *template);
    TPMT_PUBLIC *area = &template->publicArea;
    area->type = TPM2_ALG_KEYEDHASH;
    area->nameAlg = TPM2_ALG_SHA256;
    area->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA;
    area->parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL;
}

/* What authkeyd leaves empty in a Create and a CreatePrimary: no
 * authValue or data of its own (sensitive), no outside info, no PCRs. */
struct authkeyd_tpm_no_extras {
    TPM2B_SENSITIVE_CREATE sensitive;
    TPM2B_DATA outside;
    TPML_PCR_SELECTION pcrs;
};

static inline TSS2_RC authkeyd_tpm_create_primary(ESYS_CONTEXT *context, ESYS_TR *primary) {
    struct authkeyd_tpm_no_extras none;
    memset(&none, 0, sizeof none);
    TPM2B_PUBLIC template;
    authkeyd_tpm_storage_template(&template);
    return Esys_CreatePrimary(context, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
        &none.sensitive, &template, &none.outside, &none.pcrs, primary, NULL, NULL, NULL, NULL);
}

/* A new ES256 key under `parent`: its public and wrapped private parts
 * (freed with Esys_Free). */
static inline TSS2_RC authkeyd_tpm_create_es256(
    ESYS_CONTEXT *context, ESYS_TR parent, TPM2B_PUBLIC **public_part, TPM2B_PRIVATE **private_part) {
    struct authkeyd_tpm_no_extras none;
    memset(&none, 0, sizeof none);
    TPM2B_PUBLIC template;
    authkeyd_tpm_es256_template(&template);
    return Esys_Create(context, parent, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
        &none.sensitive, &template, &none.outside, &none.pcrs, private_part, public_part, NULL, NULL, NULL);
}

/* `size` bytes (at most 128, MAX_SYM_DATA) sealed under `parent`; the
 * copy in this frame is zeroed before it returns. */
static inline TSS2_RC authkeyd_tpm_create_sealed(
    ESYS_CONTEXT *context, ESYS_TR parent, const uint8_t *secret, size_t size,
    TPM2B_PUBLIC **public_part, TPM2B_PRIVATE **private_part) {
    struct authkeyd_tpm_no_extras with;
    memset(&with, 0, sizeof with);
    if (size > sizeof with.sensitive.sensitive.data.buffer) return authkeyd_tpm_rc_bad_size;
    with.sensitive.sensitive.data.size = (UINT16)size;
    memcpy(with.sensitive.sensitive.data.buffer, secret, size);
    TPM2B_PUBLIC template;
    authkeyd_tpm_sealed_template(&template);
    TSS2_RC result = Esys_Create(context, parent, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
        &with.sensitive, &template, &with.outside, &with.pcrs, private_part, public_part, NULL, NULL, NULL);
    explicit_bzero(&with, sizeof with);
    return result;
}

/* ECDSA-SHA256 over a 32-byte digest the caller made (not the TPM: no
 * hash check ticket, so the TPM's NULL ticket). */
static inline TSS2_RC authkeyd_tpm_sign_es256(
    ESYS_CONTEXT *context, ESYS_TR key, const uint8_t *digest, size_t digest_size, TPMT_SIGNATURE **signature) {
    if (digest_size != 32) return TSS2_ESYS_RC_BAD_VALUE;
    TPM2B_DIGEST in;
    memset(&in, 0, sizeof in);
    in.size = 32;
    memcpy(in.buffer, digest, 32);
    TPMT_SIG_SCHEME scheme;
    memset(&scheme, 0, sizeof scheme);
    scheme.scheme = TPM2_ALG_ECDSA;
    scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
    TPMT_TK_HASHCHECK ticket;
    memset(&ticket, 0, sizeof ticket);
    ticket.tag = TPM2_ST_HASHCHECK;
    ticket.hierarchy = TPM2_RH_NULL;
    return Esys_Sign(context, key, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &in, &scheme, &ticket, signature);
}

/* The public point of an ECC key, each coordinate at most 32 bytes (the
 * TPM may drop leading zeros); 0, or -1 when the key is not ECC. */
static inline int authkeyd_tpm_ecc_point(
    const TPM2B_PUBLIC *key, uint8_t *x, size_t *x_size, uint8_t *y, size_t *y_size) {
    const TPMT_PUBLIC *area = &key->publicArea;
    if (area->type != TPM2_ALG_ECC || area->unique.ecc.x.size > 32 || area->unique.ecc.y.size > 32) return -1;
    memcpy(x, area->unique.ecc.x.buffer, area->unique.ecc.x.size);
    *x_size = area->unique.ecc.x.size;
    memcpy(y, area->unique.ecc.y.buffer, area->unique.ecc.y.size);
    *y_size = area->unique.ecc.y.size;
    return 0;
}

/* r and s of an ECDSA signature, each at most 32 bytes; -1 for another kind. */
static inline int authkeyd_tpm_ecdsa_rs(
    const TPMT_SIGNATURE *signature, uint8_t *r, size_t *r_size, uint8_t *s, size_t *s_size) {
    if (signature->sigAlg != TPM2_ALG_ECDSA) return -1;
    const TPMS_SIGNATURE_ECC *ecdsa = &signature->signature.ecdsa;
    if (ecdsa->signatureR.size > 32 || ecdsa->signatureS.size > 32) return -1;
    memcpy(r, ecdsa->signatureR.buffer, ecdsa->signatureR.size);
    *r_size = ecdsa->signatureR.size;
    memcpy(s, ecdsa->signatureS.buffer, ecdsa->signatureS.size);
    *s_size = ecdsa->signatureS.size;
    return 0;
}

/* Whether an object read back has the type, name algorithm and
 * attributes of `expected`, one of authkeyd's templates. */
static inline int authkeyd_tpm_has_template_attributes(const TPM2B_PUBLIC *object, const TPM2B_PUBLIC *expected) {
    return object->publicArea.type == expected->publicArea.type
        && object->publicArea.nameAlg == expected->publicArea.nameAlg
        && object->publicArea.objectAttributes == expected->publicArea.objectAttributes;
}

/* Whether `key` has the attributes and scheme of authkeyd's ES256
 * template: a blob read back from a credential id or a file is checked
 * before it is loaded. */
static inline int authkeyd_tpm_is_es256_key(const TPM2B_PUBLIC *key) {
    TPM2B_PUBLIC expected;
    authkeyd_tpm_es256_template(&expected);
    const TPMS_ECC_PARMS *ecc = &key->publicArea.parameters.eccDetail;
    return authkeyd_tpm_has_template_attributes(key, &expected)
        && ecc->curveID == TPM2_ECC_NIST_P256
        && ecc->scheme.scheme == TPM2_ALG_ECDSA
        && ecc->scheme.details.ecdsa.hashAlg == TPM2_ALG_SHA256;
}

/* Whether `object` has the attributes and scheme of authkeyd's sealed
 * template (checked before a blob read back is loaded). */
static inline int authkeyd_tpm_is_sealed_object(const TPM2B_PUBLIC *object) {
    TPM2B_PUBLIC expected;
    authkeyd_tpm_sealed_template(&expected);
    return authkeyd_tpm_has_template_attributes(object, &expected)
        && object->publicArea.parameters.keyedHashDetail.scheme.scheme == TPM2_ALG_NULL;
}
#endif
