// expect: sc=safe tso=safe pso=safe
/* A mutex whose word starts out held (a static initialiser of 1, not
 * PTHREAD_MUTEX_INITIALIZER): b#2's lock waits until a#1 stores 0 into the word. The
 * engine's clocks took every word for free before its first write, and planned the lock
 * before the stores (an internal error); they now read the initial values. */
#include <pthread.h>

pthread_mutex_t m = {{1}};

void *a(void *arg) {
  *(volatile int *)&m = 7;
  *(volatile int *)&m = 0;
  return 0;
}

void *b(void *arg) {
  pthread_mutex_lock(&m);
  return 0;
}

int main(void) {
  pthread_t t1, t2;
  pthread_create(&t1, 0, a, 0);
  pthread_create(&t2, 0, b, 0);
  return 0;
}
