// expect: sc=safe tso=safe pso=safe
/* exit() in a thread ends the whole process: the join in main never returns, so the
 * assertion after it is never reached (fencer once ended only the calling thread). */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

void *worker(void *a) { exit(0); }

int main(void) {
  pthread_t h;
  pthread_create(&h, 0, worker, 0);
  pthread_join(h, 0);
  assert(0);
  return 0;
}
