// Per-thread reuse of OpenBLAS's work buffers (blas_buffers.c).
#ifndef TWOSCALE_BLAS_BUFFERS_H
#define TWOSCALE_BLAS_BUFFERS_H

// OpenBLAS's own entry points, which blas_buffers.c defines in front of the library's.
void *blas_memory_alloc(int procpos);
void blas_memory_free(void *buffer);

// 1 where this process's OpenBLAS takes its buffers from blas_buffers.c (its executable exports the two
// symbols), 0 where the library keeps its own.
int twoscale_blas_buffers_active(void);
// How many buffers the calling thread keeps.
int twoscale_blas_buffers_kept(void);
#endif
