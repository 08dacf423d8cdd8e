// expect: sc=safe tso=safe pso=safe
/* GenMC's barrier2 (tests/correct/barriers): N threads wait twice at one barrier, and
 * main returns without joining them. Nothing reads anything; what an exploration costs
 * here is the barrier alone (the arrivals' orders, N!^2 executions with the C library's
 * barrier, where GenMC has one). */
#include <pthread.h>

#define N 3
pthread_barrier_t bar;

void *t(void *arg) {
  (void)arg;
  pthread_barrier_wait(&bar);
  pthread_barrier_wait(&bar);
  return 0;
}

int main(void) {
  pthread_t th[N];
  pthread_barrier_init(&bar, 0, N);
  for (int i = 0; i < N; i++)
    pthread_create(&th[i], 0, t, 0);
  return 0;
}
