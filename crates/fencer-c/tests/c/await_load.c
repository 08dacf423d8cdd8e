// expect: sc=safe tso=safe pso=safe
/* Nidhugg's load-await: main waits until the three increments are in, and then reads 7
 * (await_vs_indep_inc in Nidhugg's tests). await_never.c waits for 8, which no
 * execution writes: a hang. */
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
  int v = __VERIFIER_load_await_i32(&x, AWAIT_COND_EQ, 7);
  assert(v == 7);
  assert(x == 7);
  return 0;
}
