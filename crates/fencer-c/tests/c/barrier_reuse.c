// expect: sc=safe tso=safe pso=safe
/* One barrier, three threads, two generations: what each thread writes between the two
 * waits is seen by every thread after the second, and no thread passes the second wait
 * before every thread has finished the first round (round[i] is 1, never 2, before it). */
#include <assert.h>
#include <pthread.h>

#define N 3
pthread_barrier_t bar;
int round1[N], round2[N];

void *t(void *arg) {
  int me = (int)(long)arg;
  round1[me] = 1;
  pthread_barrier_wait(&bar);
  for (int i = 0; i < N; i++)
    assert(round1[i] == 1);
  round2[me] = 1;
  pthread_barrier_wait(&bar);
  for (int i = 0; i < N; i++)
    assert(round2[i] == 1);
  return 0;
}

int main(void) {
  pthread_t th[N];
  pthread_barrier_init(&bar, 0, N);
  for (int i = 0; i < N; i++)
    pthread_create(&th[i], 0, t, (void *)(long)i);
  for (int i = 0; i < N; i++)
    pthread_join(th[i], 0);
  return 0;
}
