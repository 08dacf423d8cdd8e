// expect: sc=violation tso=violation pso=violation
/* An exit does not hide what other threads can do before it: the worker may run
 * between the store and the exit and see x == 1. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

int x;

void *worker(void *a) {
  assert(x == 0);
  return 0;
}

int main(void) {
  pthread_t h;
  pthread_create(&h, 0, worker, 0);
  x = 1;
  exit(0);
}
