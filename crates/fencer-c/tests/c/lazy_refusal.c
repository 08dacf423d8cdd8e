// expect: sc=safe tso=safe pso=safe
/* A call to a function fencer does not know, in code no execution reaches, does not make
 * fencer refuse the program. */
#include <assert.h>
int mystery(int);
double twice(double d) { return d * 2.0; }

int flag;

int main(void) {
  if (flag)
    return mystery(1) + (int)twice(1.0);
  assert(flag == 0);
  return 0;
}
