/* A poller takes a mutex and gives it back until `go` is set: each such iteration
 * changes nothing, and the spin-loop rule drops it, unless another thread looked at the
 * mutex while the poller held it. The observer reads the mutex's word (docs/c.md: a
 * pthread_mutex_t's first word is 1 while held) in one of several ways, chosen by a macro,
 * and main asserts it never saw the mutex held, which it can. (fencer once dropped those
 * iterations whatever the others read, unless the program used trylock: issue 45,
 * item 1.) Without a macro the observer does not look: safe. */
#include <assert.h>
#include <pthread.h>
#include <string.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
volatile int go;
int seen;

void *poller(void *a) {
  while (!go) {
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
  }
  return 0;
}

static int word(void *p) { return *(volatile int *)p; }

static int copied(pthread_mutex_t *mx) {
  int w;
  memcpy(&w, mx, sizeof w);
  return w;
}

void *observer(void *a) {
#if defined(LOAD)
  seen = *(volatile int *)&m;
#elif defined(CALLEE)
  seen = word(&m);
#elif defined(CAS)
  seen = !__sync_bool_compare_and_swap((int *)&m, 0, 0);
#elif defined(MEMCPY)
  seen = copied(&m);
#elif defined(TRYLOCK)
  seen = pthread_mutex_trylock(&m) != 0;
  if (!seen)
    pthread_mutex_unlock(&m);
#endif
  go = 1;
  return 0;
}

int main(void) {
  pthread_t p, o;
  pthread_create(&p, 0, poller, 0);
  pthread_create(&o, 0, observer, 0);
  pthread_join(p, 0);
  pthread_join(o, 0);
  assert(seen == 0);
  return 0;
}
