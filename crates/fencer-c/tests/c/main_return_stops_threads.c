// expect: sc=safe tso=safe pso=safe
/* Returning from main ends the process: a thread that waits forever for a flag nobody
 * sets is no hang, and a thread that joins main never gets past the join, since main
 * never finishes as a thread does. (fencer once ended only main's thread when `int
 * main(void)` returned, and reported a hang here: issue 45, item 5.) */
#include <assert.h>
#include <pthread.h>

volatile int flag;
pthread_t main_thread;

void *waiter(void *a) {
  while (!flag) {
  }
  return 0;
}

void *joiner(void *a) {
  pthread_join(main_thread, 0);
  assert(0);
  return 0;
}

int main(void) {
  main_thread = pthread_self();
  pthread_t w, j;
  pthread_create(&w, 0, waiter, 0);
  pthread_create(&j, 0, joiner, 0);
  return 0;
}
