// expect: sc=violation tso=violation pso=violation
/* The lock of await_xchg.c waiting for a value the lock never holds (2): both threads
 * take it at once and an increment is lost. */
#include <pthread.h>
#include <stdatomic.h>
#include <assert.h>
#include <stdint.h>
int __VERIFIER_xchg_await_i32(atomic_int *var, int value, int cond, int operand);
#define AWAIT_COND_NE 0b101
atomic_int lock;
int count;
static void *t(void *arg) {
  /* take the lock: exchange 1 in once it is not 1 */
  __VERIFIER_xchg_await_i32(&lock, 1, AWAIT_COND_NE, 2);
  int c = count; count = c + 1;
  atomic_store(&lock, 0);
  return 0;
}
int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t, 0); pthread_create(&b, 0, t, 0);
  pthread_join(a, 0); pthread_join(b, 0);
  assert(count == 2);
  return 0;
}
