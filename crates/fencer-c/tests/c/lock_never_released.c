// expect: sc=violation tso=violation pso=violation
// keeper takes the mutex for good; setter reaches the assertion's precondition only when it
// gets the mutex first. A lock attempt that stays blocked still races with the acquisition
// that blocks it (issue 10, item 8).
#include <assert.h>
#include <pthread.h>

extern void __VERIFIER_assume(int);

pthread_mutex_t l = PTHREAD_MUTEX_INITIALIZER;
int x, y;

void *keeper(void *a) {
  int r = x;
  pthread_mutex_lock(&l);
  return 0;
}

void *setter(void *a) {
  pthread_mutex_lock(&l);
  y = 42;
  pthread_mutex_unlock(&l);
  return 0;
}

void *checker(void *a) {
  __VERIFIER_assume(y == 42);
  x = 42;
  assert(0);
  return 0;
}

int main(void) {
  pthread_t a, b, c;
  pthread_create(&a, 0, keeper, 0);
  pthread_create(&b, 0, setter, 0);
  pthread_create(&c, 0, checker, 0);
  return 0;
}
