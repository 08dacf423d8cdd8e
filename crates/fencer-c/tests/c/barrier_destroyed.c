// expect: sc=violation tso=violation pso=violation
/* A wait at a destroyed barrier is an error, like a lock of a destroyed mutex. */
#include <pthread.h>

pthread_barrier_t bar;

int main(void) {
  pthread_barrier_init(&bar, 0, 1);
  pthread_barrier_wait(&bar);
  pthread_barrier_destroy(&bar);
  pthread_barrier_wait(&bar);
  return 0;
}
