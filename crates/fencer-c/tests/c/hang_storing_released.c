// expect: sc=safe
// hang_storing.c with a thread that sets the flag: the waiter stores while it waits, and
// leaves once it reads the flag set. No hang. (Under TSO and PSO the buffered stores keep
// every iteration, and DPOR reverses each read of the flag: minutes, not a test.)
#include <pthread.h>

int flag;
int y;

void *waiter(void *a) {
  while (flag == 0) {
    y = 1;
  }
  return 0;
}

void *release(void *a) {
  flag = 1;
  return 0;
}

int main(void) {
  pthread_t t, u;
  pthread_create(&t, 0, waiter, 0);
  pthread_create(&u, 0, release, 0);
  pthread_join(t, 0);
  pthread_join(u, 0);
  return 0;
}
