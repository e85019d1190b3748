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
/* epoll(7): the Glibc module leaves out <sys/epoll.h> (which would bring
 * <sys/types.h> in). The calls are declared here with the event as a
 * pointer, and the wrappers below fill and read struct epoll_event as the
 * kernel lays it out (packed on x86-64: 4 bytes of events, 8 of data), so
 * that Swift deals only in descriptors and 64-bit tokens. */
extern int epoll_create1(int flags);
extern int epoll_ctl(int epoll, int operation, int fd, void *event);
extern int epoll_wait(int epoll, void *events, int capacity, int timeout);

struct authkeyd_epoll_event {
    unsigned int events;
    unsigned long long token;
}
#if defined(__x86_64__)
__attribute__((packed))
#endif
;

/* EPOLL_CLOEXEC is O_CLOEXEC. */
static inline int authkeyd_epoll_create(void) {
    return epoll_create1(02000000);
}

/* EPOLL_CTL_ADD, level-triggered, for EPOLLIN | EPOLLRDHUP: ready while
 * there is input or the peer has hung up. */
static inline int authkeyd_epoll_watch(int epoll, int fd, unsigned long long token) {
    struct authkeyd_epoll_event event = { 0x001 | 0x2000, token };
    return epoll_ctl(epoll, 1, fd, &event);
}

/* EPOLL_CTL_DEL (the event is ignored, but kernels before 2.6.9 wanted one). */
static inline int authkeyd_epoll_unwatch(int epoll, int fd) {
    struct authkeyd_epoll_event event = { 0, 0 };
    return epoll_ctl(epoll, 2, fd, &event);
}

/* Waits up to `timeout` ms (0: not at all, -1: for ever) and writes the
 * tokens of up to `capacity` (at most 512) ready descriptors. */
static inline int authkeyd_epoll_ready(int epoll, unsigned long long *tokens, int capacity, int timeout) {
    struct authkeyd_epoll_event events[512];
    if (capacity > 512) capacity = 512;
    int count = epoll_wait(epoll, events, capacity, timeout);
    for (int index = 0; index < count; index++) tokens[index] = events[index].token;
    return count;
}
#endif
