// expect: sc=safe tso=safe pso=safe
/* Integer widths, signedness and wrap-around, arrays of structs, pointer arithmetic, and a
 * recursive function, computed by a thread and checked by main. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>

struct pair { char c; long long l; unsigned short u; };
struct pair pairs[3];
int result;

static int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }

void *worker(void *arg) {
  unsigned char uc = 250; uc += 10;            /* wraps to 4 */
  signed char sc = 127; sc++;                  /* wraps to -128 (implementation-defined) */
  uint32_t u = 0; u -= 1;                      /* 4294967295 */
  int64_t big = (int64_t)u + 1;                /* 4294967296 */
  struct pair *p = &pairs[0];
  (p + 2)->u = (unsigned short)70000;          /* 70000 mod 65536 = 4464 */
  p[1].l = big;
  p->c = (char)sc;
  result = uc + (u / 2u > 2147483646u) + fact(5) + (int)(u >> 31) + (-7 / 2) + (-7 % 3);
  return 0;
}

int main(void) {
  pthread_t a;
  pthread_create(&a, 0, worker, 0);
  pthread_join(a, 0);
  assert(pairs[2].u == 4464);
  assert(pairs[1].l == 4294967296LL);
  assert(pairs[0].c == -128);
  assert(result == 4 + 1 + 120 + 1 - 3 - 1);
  return 0;
}
