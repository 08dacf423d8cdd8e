// expect: sc=violation tso=violation pso=violation
/* pthread_mutex_init of a mutex another thread holds: a lock after the init succeeds
 * although a#1 never unlocked, and in the order where the init comes first, one of the
 * two lockers waits for ever (a deadlock). The engine once planned a lock just before the
 * init, where the mutex is still held: an execution the program cannot take (in release
 * builds, an internal error since the enabled check). main joins them all: returning
 * from main would end the process, waiting lockers and all. */
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *a(void *arg) {
  pthread_mutex_lock(&m);
  return 0;
}

void *b(void *arg) {
  pthread_mutex_init(&m, 0);
  return 0;
}

void *c(void *arg) {
  pthread_mutex_lock(&m);
  return 0;
}

int main(void) {
  pthread_t t1, t2, t3;
  pthread_create(&t1, 0, a, 0);
  pthread_create(&t2, 0, b, 0);
  pthread_create(&t3, 0, c, 0);
  pthread_join(t1, 0);
  pthread_join(t2, 0);
  pthread_join(t3, 0);
  return 0;
}
