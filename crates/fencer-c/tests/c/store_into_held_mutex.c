// expect: sc=violation tso=violation pso=violation
/* Plain stores into a mutex word: a#1 writes 1 (the mutex is held from then on, a lock
 * waits) and later 0 (free again). Stored while b#2 holds the mutex, the 1 takes it from
 * b#2, whose unlock then faults. The store of 0 is made while the mutex is held, so b#2's
 * lock races with the store of 1 through it, as with an acquisition through its release. */
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int x;

void *a(void *arg) {
  *(volatile int *)&m = 1;
  x = 1;
  *(volatile int *)&m = 0;
  return 0;
}

void *b(void *arg) {
  pthread_mutex_lock(&m);
  x = 2;
  pthread_mutex_unlock(&m);
  return 0;
}

int main(void) {
  pthread_t t1, t2;
  pthread_create(&t1, 0, a, 0);
  pthread_create(&t2, 0, b, 0);
  return 0;
}
