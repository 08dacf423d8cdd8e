// expect: sc=violation tso=incomplete pso=incomplete
// A waiting loop that stores as it waits: nobody ever sets the flag, so the thread goes
// round forever and main's join never returns. Each iteration's store is overwritten by
// the next before anyone reads it, so DPOR drops the iteration (the execution without it
// is explored) and the thread never blocks as after a pure iteration: the hang is found
// by running the thread alone until its state, memory included, comes back. Under TSO and
// PSO the stores are buffered, nothing comes back, and the run stops at --max-depth.
#include <pthread.h>

int flag;
int y;

void *waiter(void *a) {
  while (flag == 0) {
    y = 1;
  }
  return 0;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, waiter, 0);
  pthread_join(t, 0);
  return 0;
}
