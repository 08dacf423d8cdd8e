// An input and loops without a bound, proved safe for every input by
// `fencer check examples/input_loop.c --engine abpress`.
#include <pthread.h>

extern int __VERIFIER_nondet_int(void);
extern void __VERIFIER_assume(int);
extern void reach_error(void);

int ready = 0;
int budget = 0;

void *producer(void *arg) {
  budget = 100;
  ready = 1;
  return 0;
}

int main(void) {
  int n = __VERIFIER_nondet_int();
  __VERIFIER_assume(n >= 0 && n <= 1000000);
  pthread_t t;
  pthread_create(&t, 0, producer, 0);
  while (ready == 0) {
  } // waits for the producer: no bound on the number of rounds
  if (budget != 100)
    reach_error();
  int left = n;
  while (left > 0) // n rounds, for any n
    left--;
  if (left != 0)
    reach_error();
  return 0;
}
