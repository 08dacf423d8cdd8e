// expect: sc=violation tso=violation pso=violation
/* A signal releases one waiter: with two waiting, the other waits forever, a hang. A
 * broadcast (-DBROADCAST) releases both. */
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int ready;

void *waiter(void *a) {
  pthread_mutex_lock(&m);
  while (!ready)
    pthread_cond_wait(&c, &m);
  pthread_mutex_unlock(&m);
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, waiter, 0);
  pthread_create(&b, 0, waiter, 0);
  pthread_mutex_lock(&m);
  ready = 1;
#ifdef BROADCAST
  pthread_cond_broadcast(&c);
#else
  pthread_cond_signal(&c);
#endif
  pthread_mutex_unlock(&m);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
