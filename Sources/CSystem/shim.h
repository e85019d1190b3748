#ifndef AUTHKEYD_CSYSTEM_SHIM_H
#define AUTHKEYD_CSYSTEM_SHIM_H
/* Linux calls Swift cannot reach directly: prctl(2) is variadic, which
 * Swift does not import, so each use gets a fixed-argument wrapper; the
 * Glibc module leaves out <sys/random.h> (getrandom). */
#include <sys/prctl.h>
#include <sys/random.h>

/* PR_SET_NAME: names the calling thread (15 bytes at most), for ps and gdb. */
static inline int authkeyd_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

/* PR_SET_DUMPABLE: 0 forbids core dumps and ptrace attach by the same uid,
 * so PINs and tokens in memory cannot be read out of the daemon. */
static inline int authkeyd_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}

/* accept4(2) is a GNU extension the Glibc module leaves out: it sets
 * SOCK_CLOEXEC and SOCK_NONBLOCK as it makes the descriptor. */
struct sockaddr;
extern int accept4(int fd, struct sockaddr *address, unsigned int *length, int flags);

static inline int authkeyd_accept(int listener, int flags) {
    return accept4(listener, 0, 0, flags);
}
#endif
