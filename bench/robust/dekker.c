// expect: sc=safe tso=violation pso=violation
// robust: tso=no pso=no
/* dekker.c -- Dekker's mutual-exclusion algorithm for two threads, no fences.
 *
 * Origin: the "dekker" benchmark of Burnim, Sen and Stergiou, "Sound and Complete
 * Monitoring of Sequential Consistency for Relaxed Memory Models" (TACAS'11), section 7,
 * Tables 1 and 2 (20 LOC there; the data-structure benchmarks of that paper come from
 * CheckFence, Burckhardt/Alur/Martin PLDI'07, the two mutual-exclusion ones are the
 * textbook algorithms). This is Dekker's algorithm as in Dijkstra's presentation: a flag
 * per thread and a `turn` variable that decides who backs off.
 *
 * Harness: two threads, each enters the critical section once. Inside, a plain
 * read-increment-write of `cs` and a check that nobody else is inside (`inside`); main
 * asserts after both joins that both increments survived (cs == 2).
 *
 * Expected robustness (is every TSO/PSO execution SC?):
 *   TSO: NOT robust. The entry protocol is the store-buffering pattern: thread i stores
 *        flag_i = 1 and then loads flag_j. Under TSO the store can wait in i's buffer
 *        while the load reads flag_j = 0 from memory, and symmetrically for j: both
 *        read 0, both enter. No SC execution lets both read 0 (each flag store precedes
 *        the other thread's load in any interleaving where both loads see 0 -- a cycle).
 *   PSO: NOT robust, for the same reason (PSO allows everything TSO does), plus the
 *        exit stores (cs, turn, flag) may reach memory out of order.
 *   The SC violation is also an assertion failure: both threads in the critical
 *   section lose an increment (and may see `inside` set), so `fencer check` says
 *   violation under TSO and PSO and safe under SC. */
#include <assert.h>
#include <pthread.h>

volatile int flag0 = 0, flag1 = 0, turn = 0;
volatile int cs = 0;     /* incremented in the critical section */
volatile int inside = 0; /* 1 while some thread is in the critical section */

static void critical(void) {
  assert(inside == 0);
  inside = 1;
  cs = cs + 1;
  inside = 0;
}

void *t0(void *arg) {
  flag0 = 1;
  while (flag1) {
    if (turn != 0) {
      flag0 = 0;
      while (turn != 0) { }
      flag0 = 1;
    }
  }
  critical();
  turn = 1;
  flag0 = 0;
  return 0;
}

void *t1(void *arg) {
  flag1 = 1;
  while (flag0) {
    if (turn != 1) {
      flag1 = 0;
      while (turn != 1) { }
      flag1 = 1;
    }
  }
  critical();
  turn = 0;
  flag1 = 0;
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t0, 0);
  pthread_create(&b, 0, t1, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(cs == 2);
  return 0;
}
