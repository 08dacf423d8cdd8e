// expect: sc=safe tso=safe pso=safe
/* Each thread writes its slot, waits at the barrier, then reads the other's: without the
 * barrier's release and acquire, PSO (and TSO, for store buffering) would show 0. Used
 * twice, to check that the barrier can be reused. */
#include <assert.h>
#include <pthread.h>

pthread_barrier_t bar;
int slot[2], round2[2];

void *t(void *arg) {
  int me = (int)(long)arg;
  slot[me] = 1;
  pthread_barrier_wait(&bar);
  assert(slot[1 - me] == 1);
  round2[me] = 1;
  pthread_barrier_wait(&bar);
  assert(round2[1 - me] == 1);
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_barrier_init(&bar, 0, 2);
  pthread_create(&a, 0, t, (void *)0L);
  pthread_create(&b, 0, t, (void *)1L);
  pthread_join(a, 0);
  pthread_join(b, 0);
  pthread_barrier_destroy(&bar);
  return 0;
}
