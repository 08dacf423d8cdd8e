// expect: sc=violation tso=violation pso=violation
/* main locks the mutex and frees it by a plain store of 0 while no other thread exists,
 * then stores 0 again after starting t#1. If t#1 locks between, the second store takes
 * the mutex from it and its unlock faults. The engine kept the mutex held after the
 * first store (made by a thread running alone, recorded without clocks), so the lock
 * did not race with the second store: a wrong safe under SC. */
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *t(void *arg) {
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  return 0;
}

int main(void) {
  pthread_t a;
  pthread_mutex_lock(&m);
  *(volatile int *)&m = 0;
  pthread_create(&a, 0, t, 0);
  *(volatile int *)&m = 0;
  pthread_join(a, 0);
  return 0;
}
