// expect: sc=violation tso=violation pso=violation
/* Two readers hold the lock at once: a reader-side update is not exclusive. */
#include <assert.h>
#include <pthread.h>

pthread_rwlock_t l;
int n;

void *t(void *arg) {
  pthread_rwlock_rdlock(&l);
  int v = n;
  n = v + 1;
  pthread_rwlock_unlock(&l);
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_rwlock_init(&l, 0);
  pthread_create(&a, 0, t, 0);
  pthread_create(&b, 0, t, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(n == 2);
  return 0;
}
