// expect: sc=violation tso=violation pso=violation
/* Four threads at a barrier for two: which two pass together depends on the order they
 * arrive in. Thread 0 passing with thread 3 while threads 1 and 2 have not arrived yet is
 * the violation: found only if the search tries every pairing of the generations. */
#include <assert.h>
#include <pthread.h>

pthread_barrier_t bar;
int here[4];

void *t(void *arg) {
  int me = (int)(long)arg;
  here[me] = 1;
  pthread_barrier_wait(&bar);
  if (me == 0)
    assert(!(here[3] == 1 && here[1] == 0 && here[2] == 0));
  return 0;
}

int main(void) {
  pthread_t th[4];
  pthread_barrier_init(&bar, 0, 2);
  for (int i = 0; i < 4; i++)
    pthread_create(&th[i], 0, t, (void *)(long)i);
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], 0);
  return 0;
}
