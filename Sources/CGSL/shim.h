// GSL, with CBLAS provided by OpenBLAS (gsl_cblas.h declares the standard cblas_* symbols, which
// libopenblas exports), plus the few LAPACK (Fortran ABI) routines twoscale calls.
#ifndef TWOSCALE_CGSL_SHIM_H
#define TWOSCALE_CGSL_SHIM_H
#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_cblas.h>
#include <gsl/gsl_sf_log.h>
#include <malloc.h>

// LAPACK: symmetric eigenvalues (divide and conquer), column-major, Fortran calling convention.
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
             double *work, const int *lwork, int *iwork, const int *liwork, int *info);
// LAPACK: the two steps dsyevd takes without vectors — reduction to tridiagonal form, then the
// tridiagonal eigenvalues (Pal–Walker–Kahan QL/QR) — for SymmetricEigen's values-only path.
void dsytrd_(const char *uplo, const int *n, double *a, const int *lda, double *d, double *e, double *tau,
             double *work, const int *lwork, int *info);
void dsterf_(const int *n, double *d, double *e, int *info);
// LAPACK: symmetric positive definite solve helpers (Cholesky).
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);

// OpenBLAS threading control: twoscale parallelises Monte Carlo itself, one BLAS thread per task.
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
// glibc malloc: serve blocks below 32 MiB from the arenas, keep up to `trim` free bytes at an arena's top
// mapped, and pad each heap's growth by `pad` bytes (a thread's arena then keeps a heap that falls wholly
// free instead of unmapping it), rather than faulting memory in again on every reuse (Allocator).
static inline int twoscale_keep_freed_memory(int trim, int pad) {
    return mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024) && mallopt(M_TRIM_THRESHOLD, trim) && mallopt(M_TOP_PAD, pad);
}
// GSL exports its solver types as mutable globals; read them through a function (Swift 6 concurrency).
static inline const gsl_root_fsolver_type *twoscale_root_brent(void) { return gsl_root_fsolver_brent; }
#endif
