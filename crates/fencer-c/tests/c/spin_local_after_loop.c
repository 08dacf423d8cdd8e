// expect: sc=violation tso=violation pso=violation
// A waiting loop whose body writes a local read after the loop: its iterations are not
// all alike, so the spin-loop pruning must keep them (issue 10, item 1).
#include <assert.h>
#include <pthread.h>

volatile int flag;

void *setter(void *arg) {
  flag = 1;
  return 0;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, setter, 0);
  int b = 1;
  while (flag == 0) {
    b = 0;
  }
  assert(b == 1); // fails when main waited at least once
  pthread_join(t, 0);
  return 0;
}
