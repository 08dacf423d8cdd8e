// expect: sc=violation tso=violation pso=violation
/* Lock-order inversion: each thread holds one mutex and waits for the other. */
#include <pthread.h>

pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;

void *t0(void *arg) {
  pthread_mutex_lock(&a); pthread_mutex_lock(&b);
  pthread_mutex_unlock(&b); pthread_mutex_unlock(&a);
  return 0;
}
void *t1(void *arg) {
  pthread_mutex_lock(&b); pthread_mutex_lock(&a);
  pthread_mutex_unlock(&a); pthread_mutex_unlock(&b);
  return 0;
}

int main(void) {
  pthread_t x, y;
  pthread_create(&x, 0, t0, 0);
  pthread_create(&y, 0, t1, 0);
  pthread_join(x, 0);
  pthread_join(y, 0);
  return 0;
}
