// expect: sc=violation tso=violation pso=violation
/* Waiting at a barrier never initialised, or one destroyed, is an error (undefined in
 * POSIX), reported where the wait is; so is a count of 0 (EINVAL). */
#include <assert.h>
#include <errno.h>
#include <pthread.h>

pthread_barrier_t bar, other;

int main(void) {
  assert(pthread_barrier_init(&other, 0, 0) == EINVAL);
  pthread_barrier_init(&other, 0, 1);
  assert(pthread_barrier_wait(&other) == PTHREAD_BARRIER_SERIAL_THREAD);
  pthread_barrier_destroy(&other);
  pthread_barrier_wait(&bar);
  return 0;
}
