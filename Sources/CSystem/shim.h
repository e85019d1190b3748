#ifndef AUTHKEYD_CSYSTEM_SHIM_H
#define AUTHKEYD_CSYSTEM_SHIM_H
/* Linux calls Swift cannot reach directly: prctl(2) is variadic, which
 * Swift does not import, so each use gets a fixed-argument wrapper. The
 * GNU extensions below are declared here rather than by including their
 * headers, which would bring <sys/types.h> into this module and make
 * mode_t and uid_t its types in SystemKit's public API. */
#include <sys/prctl.h>

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

/* pipe2(2) is a GNU extension too: O_CLOEXEC set as the pipe is made, so
 * no helper started meanwhile inherits it. */
extern int pipe2(int fds[2], int flags);

static inline int authkeyd_pipe(int fds[2], int flags) {
    return pipe2(fds, flags);
}

/* getrandom(2): the Glibc module leaves out <sys/random.h>. */
extern long getrandom(void *buffer, unsigned long length, unsigned int flags);

static inline long authkeyd_getrandom(void *buffer, unsigned long length) {
    return getrandom(buffer, length, 0);
}
#endif
