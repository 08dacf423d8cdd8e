/* fencer's C library: POSIX synchronisation and string functions, written in the C that
 * fencer's front-end models, compiled with the program and linked in for the functions the
 * program calls and does not define (llvm-link --only-needed).
 *
 * Memory models: every lock, post, unlock and barrier step below is a `__sync_*`
 * read-modify-write (a full barrier under TSO and PSO: the thread's store buffers drain
 * first) or a seq_cst store, so each release publishes the caller's earlier stores, as
 * POSIX requires of these functions. Waiting is a loop that reads until it may go on:
 * fencer drops an iteration that only read (the spin-loop pruning), so a wait costs one
 * read per value it can see, and the exploration goes on with the execution in which the
 * awaited post, unlock or arrival comes first (the race between the read and that write
 * is reversed). A wait that nothing left running can end is reported as a hang, the way a
 * deadlock on a mutex is.
 *
 * State lives in the first bytes of the caller's object (sem_t, pthread_rwlock_t, ...):
 * fencer's memory is byte cells, and a scalar lives in the cell of its first byte. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>

void __VERIFIER_assume(int);
void __assert_fail(const char *, const char *, unsigned int, const char *);

#define FENCER_FAIL(text) __assert_fail(text, __FILE__, __LINE__, __func__)

/* errno: one per thread (thread-local storage is one copy per thread). */
static __thread int fencer_errno;
int *__errno_location(void) { return &fencer_errno; }

/* Semaphores: the count in the first int. */
int sem_init(sem_t *s, int pshared, unsigned int value) {
  (void)pshared;
  __atomic_store_n((int *)s, (int)value, __ATOMIC_SEQ_CST);
  return 0;
}

int sem_wait(sem_t *s) {
  int *c = (int *)s;
  for (;;) {
    int v = *(volatile int *)c;
    if (v > 0 && __sync_bool_compare_and_swap(c, v, v - 1))
      return 0;
  }
}

int sem_trywait(sem_t *s) {
  int *c = (int *)s;
  for (;;) {
    int v = *(volatile int *)c;
    if (v <= 0) {
      fencer_errno = EAGAIN;
      return -1;
    }
    if (__sync_bool_compare_and_swap(c, v, v - 1))
      return 0;
  }
}

int sem_post(sem_t *s) {
  __sync_fetch_and_add((int *)s, 1);
  return 0;
}

int sem_getvalue(sem_t *s, int *value) {
  *value = *(volatile int *)s;
  return 0;
}

int sem_destroy(sem_t *s) {
  (void)s;
  return 0;
}

/* Read-write locks: 0 free, n > 0 held by n readers, -1 held by a writer. No preference
 * between readers and writers is modelled (POSIX leaves it open). */
int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a) {
  (void)a;
  __atomic_store_n((int *)l, 0, __ATOMIC_SEQ_CST);
  return 0;
}

int pthread_rwlock_rdlock(pthread_rwlock_t *l) {
  int *c = (int *)l;
  for (;;) {
    int v = *(volatile int *)c;
    if (v >= 0 && __sync_bool_compare_and_swap(c, v, v + 1))
      return 0;
  }
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *l) {
  int *c = (int *)l;
  for (;;) {
    int v = *(volatile int *)c;
    if (v < 0)
      return EBUSY;
    if (__sync_bool_compare_and_swap(c, v, v + 1))
      return 0;
  }
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l) {
  int *c = (int *)l;
  for (;;) {
    int v = *(volatile int *)c;
    if (v == 0 && __sync_bool_compare_and_swap(c, 0, -1))
      return 0;
  }
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *l) {
  return __sync_bool_compare_and_swap((int *)l, 0, -1) ? 0 : EBUSY;
}

int pthread_rwlock_unlock(pthread_rwlock_t *l) {
  int *c = (int *)l;
  int v = *(volatile int *)c;
  if (v == 0)
    FENCER_FAIL("pthread_rwlock_unlock of a lock nobody holds");
  if (v < 0)
    __sync_bool_compare_and_swap(c, -1, 0);
  else
    __sync_fetch_and_sub(c, 1);
  return 0;
}

int pthread_rwlock_destroy(pthread_rwlock_t *l) {
  (void)l;
  return 0;
}

/* Barriers: the count in the first int (fencer_ir::barrier keeps the arrivals and the
 * generation in the bits of that cell above it; pthread_barrier_wait is two operations of
 * fencer's own, an arrival and a pass). The last arrival is the serial thread (as in
 * glibc); any thread can be the last. A count of 0 marks a barrier never initialised (a
 * zeroed object) or destroyed: waiting at it is an error, as a lock of a destroyed mutex
 * is. */
int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a,
                         unsigned int count) {
  (void)a;
  if (count == 0 || count > 0xffff)
    return EINVAL;
  __atomic_store_n((int *)b, (int)count, __ATOMIC_SEQ_CST);
  return 0;
}

int pthread_barrier_destroy(pthread_barrier_t *b) {
  __atomic_store_n((int *)b, 0, __ATOMIC_SEQ_CST);
  return 0;
}

/* pthread_once: 0 not run, 1 running, 2 done; late callers wait for done. */
int pthread_once(pthread_once_t *o, void (*init)(void)) {
  int *c = (int *)o;
  if (__sync_bool_compare_and_swap(c, 0, 1)) {
    init();
    __atomic_store_n(c, 2, __ATOMIC_SEQ_CST);
    return 0;
  }
  while (*(volatile int *)c != 2) {
  }
  return 0;
}

/* Detached threads run as any other; nothing joins them. */
int pthread_detach(pthread_t t) {
  (void)t;
  return 0;
}

int pthread_equal(pthread_t a, pthread_t b) { return a == b; }

/* Thread-specific data: 8 keys. A key's slot is taken by compare-and-swap, so a deleted
 * key's slot is used again, and each slot counts its generations: a value belongs to the
 * generation it was set in, and reads as NULL (and is no destructor's business) once its
 * key is deleted, as glibc has it. A key's destructor runs when a thread returns from its
 * start function or calls pthread_exit (not when the process exits): in each pass, every
 * key in slot order whose value is not NULL has it set to NULL and, if the key has a
 * destructor and the value its generation, the destructor called with it; passes repeat
 * while some destructor ran, PTHREAD_DESTRUCTOR_ITERATIONS (4) times at most, as POSIX
 * allows and glibc does (POSIX leaves the order of keys unspecified; this is glibc's).
 * The front-end calls __fencer_tls_exit at those points when the program creates keys. */
#define FENCER_KEYS 8
#ifndef PTHREAD_DESTRUCTOR_ITERATIONS
#define PTHREAD_DESTRUCTOR_ITERATIONS 4
#endif
static int fencer_key_used[FENCER_KEYS];
/* One past the highest slot ever taken: exits look at no more. */
static int fencer_keys_high;
static int fencer_key_gen[FENCER_KEYS];
static void (*fencer_destructors[FENCER_KEYS])(void *);
static __thread void *fencer_specific[FENCER_KEYS];
static __thread int fencer_specific_gen[FENCER_KEYS];

void __fencer_tls_exit(void) {
  int high = __atomic_load_n(&fencer_keys_high, __ATOMIC_SEQ_CST);
  for (int pass = 0; pass < PTHREAD_DESTRUCTOR_ITERATIONS; pass++) {
    int called = 0;
    for (int k = 0; k < high; k++) {
      void *v = fencer_specific[k];
      if (v == NULL)
        continue;
      fencer_specific[k] = NULL;
      if (fencer_specific_gen[k] != __atomic_load_n(&fencer_key_gen[k], __ATOMIC_SEQ_CST))
        continue;
      void (*d)(void *) = __atomic_load_n(&fencer_destructors[k], __ATOMIC_SEQ_CST);
      if (d == NULL)
        continue;
      d(v);
      called = 1;
    }
    if (!called)
      return;
  }
}

int pthread_key_create(pthread_key_t *key, void (*destructor)(void *)) {
  /* Never true: it names __fencer_tls_exit, so that linking the library for this
   * function brings it along (the front-end calls it at thread exit). */
  if ((void *)destructor == (void *)__fencer_tls_exit)
    return EINVAL;
  for (int k = 0; k < FENCER_KEYS; k++) {
    if (__sync_bool_compare_and_swap(&fencer_key_used[k], 0, 1)) {
      int h = __atomic_load_n(&fencer_keys_high, __ATOMIC_SEQ_CST);
      while (h <= k && !__sync_bool_compare_and_swap(&fencer_keys_high, h, k + 1))
        h = __atomic_load_n(&fencer_keys_high, __ATOMIC_SEQ_CST);
      __atomic_store_n(&fencer_destructors[k], destructor, __ATOMIC_SEQ_CST);
      __sync_fetch_and_add(&fencer_key_gen[k], 1);
      *key = (pthread_key_t)k;
      return 0;
    }
  }
  return EAGAIN;
}

/* The key's destructor no longer runs and its values read as NULL; the values themselves
 * are the application's to free (POSIX). */
int pthread_key_delete(pthread_key_t key) {
  if (key >= FENCER_KEYS || !__atomic_load_n(&fencer_key_used[key], __ATOMIC_SEQ_CST))
    return EINVAL;
  __atomic_store_n(&fencer_destructors[key], NULL, __ATOMIC_SEQ_CST);
  __sync_fetch_and_add(&fencer_key_gen[key], 1);
  __atomic_store_n(&fencer_key_used[key], 0, __ATOMIC_SEQ_CST);
  return 0;
}

void *pthread_getspecific(pthread_key_t key) {
  if (key >= FENCER_KEYS || fencer_specific[key] == NULL)
    return NULL;
  if (fencer_specific_gen[key] != __atomic_load_n(&fencer_key_gen[key], __ATOMIC_SEQ_CST))
    return NULL;
  return fencer_specific[key];
}

int pthread_setspecific(pthread_key_t key, const void *value) {
  if (key >= FENCER_KEYS)
    return EINVAL;
  fencer_specific_gen[key] = __atomic_load_n(&fencer_key_gen[key], __ATOMIC_SEQ_CST);
  fencer_specific[key] = (void *)value;
  return 0;
}

/* Strings. */
size_t strlen(const char *s) {
  size_t n = 0;
  while (s[n])
    n++;
  return n;
}

size_t strnlen(const char *s, size_t max) {
  size_t n = 0;
  while (n < max && s[n])
    n++;
  return n;
}

char *strcpy(char *d, const char *s) {
  size_t i = 0;
  while ((d[i] = s[i]) != 0)
    i++;
  return d;
}

char *strncpy(char *d, const char *s, size_t n) {
  size_t i = 0;
  for (; i < n && s[i]; i++)
    d[i] = s[i];
  for (; i < n; i++)
    d[i] = 0;
  return d;
}

char *strcat(char *d, const char *s) {
  strcpy(d + strlen(d), s);
  return d;
}

char *strncat(char *d, const char *s, size_t n) {
  size_t k = strlen(d), i = 0;
  for (; i < n && s[i]; i++)
    d[k + i] = s[i];
  d[k + i] = 0;
  return d;
}

int strcmp(const char *a, const char *b) {
  size_t i = 0;
  while (a[i] && a[i] == b[i])
    i++;
  return (unsigned char)a[i] - (unsigned char)b[i];
}

int strncmp(const char *a, const char *b, size_t n) {
  size_t i = 0;
  if (n == 0)
    return 0;
  while (i + 1 < n && a[i] && a[i] == b[i])
    i++;
  return (unsigned char)a[i] - (unsigned char)b[i];
}

char *strchr(const char *s, int c) {
  for (size_t i = 0;; i++) {
    if (s[i] == (char)c)
      return (char *)s + i;
    if (!s[i])
      return NULL;
  }
}

char *strrchr(const char *s, int c) {
  const char *last = NULL;
  for (size_t i = 0;; i++) {
    if (s[i] == (char)c)
      last = s + i;
    if (!s[i])
      return (char *)last;
  }
}

int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i])
      return x[i] - y[i];
  return 0;
}

void *memchr(const void *s, int c, size_t n) {
  const unsigned char *p = s;
  for (size_t i = 0; i < n; i++)
    if (p[i] == (unsigned char)c)
      return (void *)(p + i);
  return NULL;
}

/* Reached only through a pointer: direct calls are clang's intrinsics, which the front-end
 * lowers to a loop over the cells when the length is known only at run time. */
void *memcpy(void *d, const void *s, size_t n) { return __builtin_memcpy(d, s, n); }
void *memmove(void *d, const void *s, size_t n) { return __builtin_memmove(d, s, n); }
void *memset(void *d, int c, size_t n) { return __builtin_memset(d, c, n); }

int abs(int x) { return x < 0 ? -x : x; }
long labs(long x) { return x < 0 ? -x : x; }
long long llabs(long long x) { return x < 0 ? -x : x; }
