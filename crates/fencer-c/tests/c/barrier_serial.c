// expect: sc=safe tso=safe pso=safe
/* Exactly one of the threads that pass a barrier together gets
 * PTHREAD_BARRIER_SERIAL_THREAD, the others 0 (POSIX), in each generation. */
#include <assert.h>
#include <pthread.h>

#define N 3
pthread_barrier_t bar;
int res[2][N];

void *t(void *arg) {
  int me = (int)(long)arg;
  res[0][me] = pthread_barrier_wait(&bar);
  res[1][me] = pthread_barrier_wait(&bar);
  return 0;
}

int main(void) {
  pthread_t th[N];
  pthread_barrier_init(&bar, 0, N);
  for (int i = 0; i < N; i++)
    pthread_create(&th[i], 0, t, (void *)(long)i);
  for (int i = 0; i < N; i++)
    pthread_join(th[i], 0);
  for (int g = 0; g < 2; g++) {
    int serial = 0;
    for (int i = 0; i < N; i++) {
      assert(res[g][i] == 0 || res[g][i] == PTHREAD_BARRIER_SERIAL_THREAD);
      serial += res[g][i] == PTHREAD_BARRIER_SERIAL_THREAD;
    }
    assert(serial == 1);
  }
  return 0;
}
