// expect: sc=violation tso=violation pso=violation
/* A destroy of a mutex whose word a#1 holds by plain stores (1, then 0): between the two
 * stores the destroy faults (a held mutex). A destroy never waits, so unlike a lock it can
 * run just before the store of 0 made while the mutex was held: it races with it. The
 * first version of the hand-made-lock change treated it as a lock and said safe. */
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int x;

void *a(void *arg) {
  *(volatile int *)&m = 1;
  x = 1;
  *(volatile int *)&m = 0;
  return 0;
}

void *c(void *arg) {
  pthread_mutex_destroy(&m);
  x = 2;
  return 0;
}

int main(void) {
  pthread_t t1, t2;
  pthread_create(&t1, 0, a, 0);
  pthread_create(&t2, 0, c, 0);
  return 0;
}
