// expect: sc=violation tso=violation pso=violation
/* The read of the other thread's slot comes before the barrier: nothing orders it after
 * the other's store, so it can read 0. */
#include <assert.h>
#include <pthread.h>

pthread_barrier_t bar;
int slot[2];

void *t(void *arg) {
  int me = (int)(long)arg;
  slot[me] = 1;
  int seen = slot[1 - me];
  pthread_barrier_wait(&bar);
  assert(seen == 1);
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_barrier_init(&bar, 0, 2);
  pthread_create(&a, 0, t, (void *)0L);
  pthread_create(&b, 0, t, (void *)1L);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
