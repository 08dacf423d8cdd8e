// expect: sc=violation tso=violation pso=violation
/* A load-await no write ever satisfies (x ends at 7, never 8): main waits forever, a
 * hang, not a blocked execution to discard. */
#include <pthread.h>
#include <stdatomic.h>
#include <assert.h>
#include <stdint.h>
int __VERIFIER_load_await_i32(atomic_int *var, int cond, int operand);
#define AWAIT_COND_EQ 0b010
atomic_int x;
int seen;
static void *p(void *arg) { atomic_fetch_add(&x, (int)(intptr_t)arg); return 0; }
int main(void) {
  pthread_t pt[3];
  pthread_create(pt+0, 0, p, (void*)(intptr_t)2);
  pthread_create(pt+1, 0, p, (void*)(intptr_t)4);
  pthread_create(pt+2, 0, p, (void*)(intptr_t)1);
  int v = __VERIFIER_load_await_i32(&x, AWAIT_COND_EQ, 8);
  assert(v == 7);
  assert(x == 7);
  return 0;
}
