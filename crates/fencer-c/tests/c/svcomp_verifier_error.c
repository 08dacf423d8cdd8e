// expect: sc=safe tso=safe pso=safe
/* Older SV-COMP tasks declare __VERIFIER_error instead of defining reach_error; the same
 * conventions hold: `if (!c) abort();` is an assume, and only the error call is a
 * violation. Both engines read this one rule from the front-end (fencer's DPOR once
 * reported the abort: issue 45, item 2). */
#include <pthread.h>
#include <stdlib.h>
extern void __VERIFIER_error(void);

int x;

void *t(void *a) {
  x = 1;
  return 0;
}

int main(void) {
  pthread_t h;
  pthread_create(&h, 0, t, 0);
  int seen = x;
  if (!(seen == 1))
    abort();
  if (seen != 1)
    __VERIFIER_error();
  return 0;
}
