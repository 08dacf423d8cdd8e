// expect: sc=safe tso=violation pso=violation
// robust: tso=no pso=no
/* bakery.c -- Lamport's bakery algorithm for two threads, no fences.
 *
 * Origin: the "bakery" benchmark of Burnim, Sen and Stergiou, "Sound and Complete
 * Monitoring of Sequential Consistency for Relaxed Memory Models" (TACAS'11), section 7,
 * Tables 1 and 2 (30 LOC there; the data-structure benchmarks of that paper come from
 * CheckFence, Burckhardt/Alur/Martin PLDI'07). Lamport, CACM 1974:
 *   choosing[i] = 1; number[i] = 1 + max(number[0..N-1]); choosing[i] = 0;
 *   for each j != i: wait while choosing[j];
 *                    wait while number[j] != 0 && (number[j], j) < (number[i], i);
 *   critical section; number[i] = 0;
 *
 * Harness: two threads, each enters the critical section once; inside, a check that
 * nobody else is inside and a plain read-increment-write of `cs`; main asserts after both
 * joins that cs == 2.
 *
 * Expected robustness:
 *   TSO: NOT robust. Thread i's ticket store number[i] = t (and choosing[i] = 0) can sit
 *        in its store buffer while i reads number[j] == 0 from memory; symmetrically for
 *        j. Both then see the other's ticket as 0 and both enter -- a store-buffering
 *        cycle no interleaving produces.
 *   PSO: NOT robust (everything TSO allows, plus choosing[i] = 0 may overtake
 *        number[i] = t, so j can stop waiting on choosing[i] and still read number[i] == 0).
 *   The SC violation is also a mutual-exclusion failure, hence an assertion failure:
 *   `fencer check` says safe under SC and violation under TSO and PSO. */
#include <assert.h>
#include <pthread.h>

volatile int choosing[2] = {0, 0};
volatile int number[2] = {0, 0};
volatile int cs = 0;
volatile int inside = 0;

static void lock(int i) {
  int j = 1 - i;
  choosing[i] = 1;
  int a = number[0], b = number[1];
  number[i] = 1 + (a > b ? a : b);
  choosing[i] = 0;
  while (choosing[j]) { }
  while (1) {
    int nj = number[j];
    int ni = number[i];
    if (nj == 0 || nj > ni || (nj == ni && j > i)) break;
  }
}

static void unlock(int i) { number[i] = 0; }

void *thread(void *arg) {
  int i = (int)(long)arg;
  lock(i);
  assert(inside == 0);
  inside = 1;
  cs = cs + 1;
  inside = 0;
  unlock(i);
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, thread, (void *)0L);
  pthread_create(&b, 0, thread, (void *)1L);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(cs == 2);
  return 0;
}
