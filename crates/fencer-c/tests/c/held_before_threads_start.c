// expect: sc=safe tso=safe pso=safe
/* main makes the mutex held by a plain store before any other thread exists, and frees
 * it by another store after starting t#1, whose lock waits for that. The engine records
 * a thread running alone without clocks; it did not record that the first store left the
 * mutex held, so it took the second for a store to a free mutex and planned the lock
 * before it (an internal error). */
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *t(void *arg) {
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  return 0;
}

int main(void) {
  pthread_t a;
  *(volatile int *)&m = 1;
  pthread_create(&a, 0, t, 0);
  *(volatile int *)&m = 0;
  pthread_join(a, 0);
  return 0;
}
