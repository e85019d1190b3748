/*
 * Loads an OpenSSH security-key provider as ssh-sk-helper does (ssh-sk.c:
 * dlopen with RTLD_NOW, then the four functions by dlsym), prints what
 * sk_api_version() returns and what sk_load_resident_keys() answers (run
 * with no daemon on the socket, that is SSH_SK_ERR_DEVICE_NOT_FOUND), and
 * unloads it. scripts/check-provider compiles and runs it: its standard
 * output must hold these two lines and nothing from the provider, since
 * ssh-sk-helper's standard output is OpenSSH's channel.
 *
 * Usage: load-provider PATH
 * (built with -I Sources/CSSHSecurityKeyAPI, the project's declarations)
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sk-api.h"

/* The two functions it calls, typed as OpenSSH types them (ssh-sk.c). */
typedef uint32_t (*api_version_function)(void);
typedef int (*load_resident_keys_function)(const char *pin, struct sk_option **options,
                                           struct sk_resident_key ***keys, size_t *count);

int main(int argc, char **argv) {
    const char *names[] = {"sk_api_version", "sk_enroll", "sk_sign", "sk_load_resident_keys"};
    void *functions[4];
    void *library;

    if (argc != 2) {
        fprintf(stderr, "usage: load-provider PATH\n");
        return 64;
    }
    if ((library = dlopen(argv[1], RTLD_NOW)) == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    for (int i = 0; i < 4; i++) {
        if ((functions[i] = dlsym(library, names[i])) == NULL) {
            fprintf(stderr, "dlsym(%s): %s\n", names[i], dlerror());
            return 1;
        }
    }

    api_version_function api_version = (api_version_function)functions[0];
    printf("sk_api_version 0x%08x\n", api_version());
    fflush(stdout);

    load_resident_keys_function load_resident_keys = (load_resident_keys_function)functions[3];
    struct sk_option *no_options[] = {NULL};
    struct sk_resident_key **keys = NULL;
    size_t count = 0;
    printf("sk_load_resident_keys %d\n", load_resident_keys(NULL, no_options, &keys, &count));
    fflush(stdout);

    /* ssh-sk-helper unloads it too (sshsk_free). */
    if (dlclose(library) != 0) {
        fprintf(stderr, "dlclose: %s\n", dlerror());
        return 1;
    }
    return 0;
}
