// expect: sc=safe tso=safe pso=safe
/* A thread that waits for a flag nobody sets is no hang when main calls exit: the
 * process ends, waiting thread and all. */
#include <pthread.h>
#include <stdlib.h>

volatile int flag;

void *waiter(void *a) {
  while (!flag) {
  }
  return 0;
}

int main(void) {
  pthread_t h;
  pthread_create(&h, 0, waiter, 0);
  exit(0);
}
