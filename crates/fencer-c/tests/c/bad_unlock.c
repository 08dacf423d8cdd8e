// expect: sc=violation tso=violation pso=violation
/* Unlocking a mutex the thread does not hold. */
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

int main(void) {
  pthread_mutex_unlock(&m);
  return 0;
}
