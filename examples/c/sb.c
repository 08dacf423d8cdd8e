/* Store buffering, in C: each thread writes its flag, then reads the other's.
 * SC: r0 == 0 && r1 == 0 is impossible. TSO/PSO: both writes can wait in store buffers
 * while both reads return 0. Try: fencer check examples/c/sb.c --model tso */
#include <assert.h>
#include <pthread.h>

volatile int x = 0, y = 0;
int r0, r1;

void *t0(void *arg) { x = 1; r0 = y; return 0; }
void *t1(void *arg) { y = 1; r1 = x; return 0; }

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t0, 0);
  pthread_create(&b, 0, t1, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(!(r0 == 0 && r1 == 0));
  return 0;
}
