/* Every allocation of 1 MiB or more in a mapping of its own, between two PROT_NONE pages, so that
   /proc/PID/smaps shows each of llama.cpp's buffers apart (the kernel merges adjacent anonymous mappings). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/mman.h>

#define BIG (1UL << 20)
#define PAGE 4096UL
#define MOST 1024

extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static struct { char *at; size_t len; } apart[MOST];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int posix_memalign(void **out, size_t align, size_t n) {
    if (n >= BIG && align <= PAGE) {
        size_t len = (n + PAGE - 1) & ~(PAGE - 1);
        char *m = mmap(NULL, len + 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED && mprotect(m + PAGE, len, PROT_READ | PROT_WRITE) == 0) {
            pthread_mutex_lock(&lock);
            for (int i = 0; i < MOST; i++) {
                if (!apart[i].at) {
                    apart[i].at = m;
                    apart[i].len = len + 2 * PAGE;
                    pthread_mutex_unlock(&lock);
                    *out = m + PAGE;
                    return 0;
                }
            }
            pthread_mutex_unlock(&lock);
            munmap(m, len + 2 * PAGE);
        }
    }
    void *p = __libc_memalign(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void free(void *p) {
    if (p) {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < MOST; i++) {
            if (apart[i].at && apart[i].at + PAGE == (char *)p) {
                char *m = apart[i].at;
                size_t len = apart[i].len;
                apart[i].at = NULL;
                pthread_mutex_unlock(&lock);
                munmap(m, len);
                return;
            }
        }
        pthread_mutex_unlock(&lock);
    }
    __libc_free(p);
}
