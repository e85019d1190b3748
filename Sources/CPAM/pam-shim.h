/* What pam_authkeyd.so calls in Debian's libpam (libpam0g-dev): the
 * types, items and conversation (_pam_types.h), logging (pam_ext.h) and
 * the privilege helpers (pam_modutil.h).
 *
 * The module interface it implements (pam_sm_authenticate,
 * pam_sm_setcred) is not included from <security/pam_modules.h>: the
 * module defines those functions itself (@_cdecl), from the Linux-PAM
 * Module Writers' Guide. Of that header it needs only pam_get_user,
 * declared here as the guide gives it. */
#ifndef AUTHKEYD_PAM_SHIM_H
#define AUTHKEYD_PAM_SHIM_H

#include <security/_pam_types.h>
#include <security/pam_ext.h>
#include <security/pam_modutil.h>

extern int pam_get_user(pam_handle_t *pamh, const char **user, const char *prompt);

/* PAM_MODUTIL_DEF_PRIVS as a struct that owns its group list, so that
 * Swift can allocate one at a stable address. */
typedef struct {
    gid_t groups[PAM_MODUTIL_NGROUPS];
    struct pam_modutil_privs privs;
} authkeyd_pam_privs;

static inline void authkeyd_pam_privs_init(authkeyd_pam_privs *p) {
    p->privs.grplist = p->groups;
    p->privs.number_of_groups = PAM_MODUTIL_NGROUPS;
    p->privs.allocated = 0;
    p->privs.old_gid = (gid_t)-1;
    p->privs.old_uid = (uid_t)-1;
    p->privs.is_dropped = 0;
}

#endif
