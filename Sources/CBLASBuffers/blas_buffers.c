// Per-thread reuse of OpenBLAS's work buffers.
//
// Every OpenBLAS call that needs scratch memory (a level-2 routine such as dsymv, which LAPACK's dsytrd
// calls once per column; the level-3 packing buffers) takes a buffer from a process-wide table with
// blas_memory_alloc and returns it with blas_memory_free, both under one mutex. twoscale calls OpenBLAS
// from many threads at once (one BLAS thread each), so that mutex is contended on every column of every
// eigenproblem, and the time spent waiting for it grows with the thread count.
//
// The library calls the two functions through its procedure linkage table, so the definitions below,
// exported by the executable, come first. Each thread keeps up to KEPT buffers that it took from the
// library's own allocator (found with RTLD_NEXT) and hands them out again without a lock: the same
// buffers, of the library's size and alignment, so every result is the same to the bit. A buffer is
// always returned on the thread that took it (OpenBLAS allocates and frees within one call, and twoscale
// runs it single-threaded); a pointer this thread does not keep goes back to the library, and so do its
// kept buffers when the thread ends (worker threads come and go, and the library's table is finite).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include "blas_buffers.h"

#define KEPT 4

typedef void *(*alloc_fn)(int);
typedef void (*free_fn)(void *);

static __thread void *kept[KEPT];
static __thread unsigned char busy[KEPT];

// The library's own definition of `name` (the next after this object's), looked up once.
static void *library_symbol(void **cache, const char *name) {
    void *g = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!g) {
        g = dlsym(RTLD_NEXT, name);
        __atomic_store_n(cache, g, __ATOMIC_RELEASE);
    }
    return g;
}

static void *alloc_cache, *free_cache;
static alloc_fn library_alloc(void) { return (alloc_fn)library_symbol(&alloc_cache, "blas_memory_alloc"); }
static free_fn library_free(void) { return (free_fn)library_symbol(&free_cache, "blas_memory_free"); }

static pthread_key_t thread_end;
static pthread_once_t thread_end_once = PTHREAD_ONCE_INIT;

// At the end of a thread that kept buffers: every one back to the library.
static void give_back(void *unused) {
    (void)unused;
    free_fn next = library_free();
    for (int i = 0; i < KEPT; i++) {
        if (kept[i] && next) next(kept[i]);
        kept[i] = NULL;
        busy[i] = 0;
    }
}

static void make_thread_end(void) { pthread_key_create(&thread_end, give_back); }

void *blas_memory_alloc(int procpos) {
    for (int i = 0; i < KEPT; i++) {
        if (kept[i] && !busy[i]) { busy[i] = 1; return kept[i]; }
    }
    alloc_fn next = library_alloc();
    if (!next) return NULL;
    void *p = next(procpos);
    if (!p) return NULL;
    for (int i = 0; i < KEPT; i++) {
        if (!kept[i]) {
            if (i == 0) {  // the thread's first kept buffer: have them given back when it ends
                pthread_once(&thread_end_once, make_thread_end);
                pthread_setspecific(thread_end, &kept);
            }
            kept[i] = p;
            busy[i] = 1;
            return p;
        }
    }
    return p;
}

void blas_memory_free(void *buffer) {
    for (int i = 0; i < KEPT; i++) {
        if (kept[i] == buffer && busy[i]) { busy[i] = 0; return; }
    }
    free_fn next = library_free();
    if (next) next(buffer);
}

int twoscale_blas_buffers_active(void) {
    return dlsym(RTLD_DEFAULT, "blas_memory_alloc") == (void *)&blas_memory_alloc;
}

int twoscale_blas_buffers_kept(void) {
    int n = 0;
    for (int i = 0; i < KEPT; i++) n += kept[i] != NULL;
    return n;
}
