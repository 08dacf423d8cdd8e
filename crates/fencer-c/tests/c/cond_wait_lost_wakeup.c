// expect: sc=violation tso=violation pso=violation
/* A lost wake-up: when the signaller runs first, its signal finds no waiter and is lost,
 * and main then waits forever (POSIX allows a spurious wake-up, but never promises one).
 * fencer finds it in the program's variant whose waits return only when signalled, since
 * with spurious wake-ups a wait never blocks. */
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int ready;

void *signaller(void *a) {
  pthread_mutex_lock(&m);
  ready = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  return 0;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, signaller, 0);
  pthread_mutex_lock(&m);
  pthread_cond_wait(&c, &m);
  pthread_mutex_unlock(&m);
  pthread_join(t, 0);
  return 0;
}
