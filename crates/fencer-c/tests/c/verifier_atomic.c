// expect: sc=safe tso=safe pso=safe
/* SV-COMP conventions: atomic sections make a read-modify-write of plain accesses. */
#include <pthread.h>

extern void __VERIFIER_error(void);
extern void __VERIFIER_atomic_begin(void);
extern void __VERIFIER_atomic_end(void);
extern void __VERIFIER_assume(int);

int count;

void __VERIFIER_atomic_inc(void) { count = count + 1; }

void *t(void *arg) {
  __VERIFIER_atomic_begin();
  count = count + 1;
  __VERIFIER_atomic_end();
  __VERIFIER_atomic_inc();
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t, 0);
  pthread_create(&b, 0, t, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  __VERIFIER_assume(count >= 0);
  if (count != 4) __VERIFIER_error();
  return 0;
}
