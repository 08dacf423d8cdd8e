// Inputs under DPOR: each value that can make a difference is tried, one run per
// assignment of values. `fencer check examples/c/dice.c`.
#include <assert.h>
#include <pthread.h>

extern _Bool __VERIFIER_nondet_bool(void);
extern unsigned __VERIFIER_nondet_uint(void);
extern void __VERIFIER_assume(int);

int x;

void *roll(void *arg) {
  unsigned die = __VERIFIER_nondet_uint();
  __VERIFIER_assume(die >= 1 && die <= 6); // six values
  x = die;
  return 0;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, roll, 0);
  int bonus = __VERIFIER_nondet_bool(); // two values
  pthread_join(t, 0);
  assert(x + bonus <= 6); // fails on a six with the bonus
  return 0;
}
