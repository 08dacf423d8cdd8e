// expect: sc=safe tso=safe pso=safe
/* Three threads each write their own slot, wait at the barrier, and then read every
 * slot: the barrier orders each thread's store before every read after it, under TSO and
 * PSO too (an arrival publishes the arriving thread's stores). GenMC's barrier tests are
 * of this shape. */
#include <assert.h>
#include <pthread.h>

#define N 3
pthread_barrier_t bar;
int slot[N];

void *t(void *arg) {
  int me = (int)(long)arg;
  slot[me] = 1;
  pthread_barrier_wait(&bar);
  for (int i = 0; i < N; i++)
    assert(slot[i] == 1);
  return 0;
}

int main(void) {
  pthread_t th[N];
  pthread_barrier_init(&bar, 0, N);
  for (int i = 0; i < N; i++)
    pthread_create(&th[i], 0, t, (void *)(long)i);
  for (int i = 0; i < N; i++)
    pthread_join(th[i], 0);
  pthread_barrier_destroy(&bar);
  return 0;
}
