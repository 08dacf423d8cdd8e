// expect: sc=violation tso=violation pso=violation
// A thread that leaves through pthread_exit ends the life of its locals too: writing
// through a pointer to one afterwards is a use after free (issue 10, item 7).
#include <pthread.h>

int *volatile shared;

static void leave(void) { pthread_exit(0); }

void *worker(void *a) {
  int local = 1;
  shared = &local;
  leave();
  return 0;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  pthread_join(t, 0);
  int *p = shared;
  if (p)
    *p = 2;
  return 0;
}
