// expect: sc=safe tso=safe pso=safe
/* Store buffering repaired with inline-assembly mfence. */
#include <assert.h>
#include <pthread.h>

volatile int x, y;
int r0, r1;

void *t0(void *arg) { x = 1; asm volatile("mfence" ::: "memory"); r0 = y; return 0; }
void *t1(void *arg) { y = 1; asm volatile("mfence" ::: "memory"); r1 = x; return 0; }

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t0, 0);
  pthread_create(&b, 0, t1, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(r0 == 1 || r1 == 1);
  return 0;
}
