// expect: sc=safe tso=safe pso=safe
/* Store buffering with seq_cst atomics: each store is followed by a full fence. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

atomic_int x, y;
int r0, r1;

void *t0(void *arg) { atomic_store(&x, 1); r0 = atomic_load(&y); return 0; }
void *t1(void *arg) { atomic_store(&y, 1); r1 = atomic_load(&x); return 0; }

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t0, 0);
  pthread_create(&b, 0, t1, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(r0 == 1 || r1 == 1);
  return 0;
}
