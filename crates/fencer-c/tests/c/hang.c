// expect: sc=violation tso=violation pso=violation
// waiter waits for a flag that only a thread main never starts would set: once main is
// blocked in the join, nothing can release the loop. A hang, reported like a deadlock
// (issue 10, item 9).
#include <pthread.h>

volatile int flag;

void *waiter(void *a) {
  while (flag == 0) {
  }
  return 0;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, waiter, 0);
  pthread_join(t, 0);
  flag = 1;
  return 0;
}
