// expect: sc=safe tso=safe pso=safe
/* A hand-made spin lock (compare-and-swap, then a release store) and pthread_mutex_lock
 * on the same mutex word: each waits while the other holds it (the machine's mutex is held
 * while its word is not zero), so the increments never interleave. The release of the
 * hand-made lock is a store made while the mutex is held: a lock cannot run just before
 * it, only before the compare-and-swap that took it. The engine once planned that lock
 * just before the release store (an internal error since the enabled check). */
#include <assert.h>
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int x;

void *a(void *arg) {
  while (!__sync_bool_compare_and_swap((int *)&m, 0, 1))
    ;
  x = x + 1;
  __sync_lock_release((int *)&m);
  return 0;
}

void *b(void *arg) {
  pthread_mutex_lock(&m);
  x = x + 1;
  pthread_mutex_unlock(&m);
  return 0;
}

int main(void) {
  pthread_t t1, t2;
  pthread_create(&t1, 0, a, 0);
  pthread_create(&t2, 0, b, 0);
  pthread_join(t1, 0);
  pthread_join(t2, 0);
  assert(x == 2);
  return 0;
}
