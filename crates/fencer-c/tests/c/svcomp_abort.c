// expect: sc=safe tso=safe pso=safe
/* SV-COMP conventions: the program defines reach_error, so abort() and exit() end the
 * program without a violation (assume_abort_if_not discards the executions where its
 * condition is false), and only a call to reach_error is one. */
#include <pthread.h>
#include <stdlib.h>
extern void abort(void);
void reach_error() {}
void assume_abort_if_not(int cond) {
  if (!cond)
    abort();
}
void __VERIFIER_assert(int c) {
  if (!c)
    reach_error();
}

int x;

void *t(void *arg) {
  x = 1;
  return 0;
}

int main(void) {
  pthread_t h;
  pthread_create(&h, 0, t, 0);
  int seen = x;
  assume_abort_if_not(seen == 1);
  __VERIFIER_assert(seen == 1);
  pthread_join(h, 0);
  if (x != 1)
    exit(0);
  return 0;
}
