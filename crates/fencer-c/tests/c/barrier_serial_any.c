// expect: sc=violation tso=violation pso=violation
/* Any of the threads may be the serial one, the first one created too: the assertion
 * that it never is fails. */
#include <assert.h>
#include <pthread.h>

pthread_barrier_t bar;
int res[2];

void *t(void *arg) {
  res[(long)arg] = pthread_barrier_wait(&bar);
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_barrier_init(&bar, 0, 2);
  pthread_create(&a, 0, t, (void *)0L);
  pthread_create(&b, 0, t, (void *)1L);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(res[0] != PTHREAD_BARRIER_SERIAL_THREAD);
  return 0;
}
