// expect: sc=violation tso=violation pso=violation
/* A barrier for three threads that only two reach: both wait forever, a hang. */
#include <pthread.h>

pthread_barrier_t bar;

void *t(void *arg) {
  (void)arg;
  pthread_barrier_wait(&bar);
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_barrier_init(&bar, 0, 3);
  pthread_create(&a, 0, t, 0);
  pthread_create(&b, 0, t, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
