// expect: sc=safe tso=safe pso=safe
/* pthread_exit from a nested call ends the thread; its writes are visible to the joiner;
 * pthread_self returns the id pthread_create gave. */
#include <assert.h>
#include <pthread.h>

pthread_t ids[2];
pthread_t seen[2];
int after_exit;

static void finish(void) { pthread_exit(0); }

void *worker(void *arg) {
  long k = (long)arg;
  seen[k] = pthread_self();
  finish();
  after_exit = 1;
  return 0;
}

int main(void) {
  for (long k = 0; k < 2; k++) pthread_create(&ids[k], 0, worker, (void *)k);
  for (int k = 0; k < 2; k++) pthread_join(ids[k], 0);
  assert(seen[0] == ids[0] && seen[1] == ids[1]);
  assert(after_exit == 0);
  return 0;
}
