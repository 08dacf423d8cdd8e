// expect: sc=violation tso=violation pso=violation
/* A mutex destroyed and initialised again while another thread locks it: a lock that
 * comes between the destroy and the init uses a destroyed mutex. (The engine once did not
 * order a lock after the init's store, and called this safe under SC.) */
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *reset(void *arg) {
  pthread_mutex_destroy(&m);
  pthread_mutex_init(&m, 0);
  return 0;
}

void *use(void *arg) {
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, reset, 0);
  pthread_create(&b, 0, use, 0);
  return 0;
}
