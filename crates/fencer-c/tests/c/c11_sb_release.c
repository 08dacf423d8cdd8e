// expect: sc=safe tso=violation pso=violation
/* Store buffering with release stores and acquire loads: release/acquire does not order a
 * store before a later load, so both loads can read 0 on TSO and PSO. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

atomic_int x, y;
int r0, r1;

void *t0(void *arg) {
  atomic_store_explicit(&x, 1, memory_order_release);
  r0 = atomic_load_explicit(&y, memory_order_acquire);
  return 0;
}
void *t1(void *arg) {
  atomic_store_explicit(&y, 1, memory_order_release);
  r1 = atomic_load_explicit(&x, memory_order_acquire);
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t0, 0);
  pthread_create(&b, 0, t1, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(r0 == 1 || r1 == 1);
  return 0;
}
