// expect: sc=safe tso=safe pso=safe
/* A plain `inline` function (no `static`, no `extern` definition elsewhere), as SV-COMP
 * programs write them: called at -O0, it needs its out-of-line definition. */
#include <assert.h>

int lock;

inline void acquire(void) { lock = 1; }

int main(void) {
  acquire();
  assert(lock == 1);
  return 0;
}
