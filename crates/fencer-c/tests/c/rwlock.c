// expect: sc=safe tso=safe pso=safe
/* Read-write lock: a writer updates two variables under the write lock; readers see both
 * updated or neither. The unlock is a release under every model. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>

pthread_rwlock_t l;
int a, b;

void *writer(void *arg) {
  pthread_rwlock_wrlock(&l);
  a = 1;
  b = 1;
  pthread_rwlock_unlock(&l);
  return 0;
}

void *reader(void *arg) {
  pthread_rwlock_rdlock(&l);
  int x = a, y = b;
  pthread_rwlock_unlock(&l);
  assert(x == y);
  return 0;
}

int main(void) {
  pthread_t w, r1, r2;
  pthread_rwlock_init(&l, 0);
  pthread_create(&w, 0, writer, 0);
  pthread_create(&r1, 0, reader, 0);
  pthread_create(&r2, 0, reader, 0);
  pthread_join(w, 0);
  pthread_join(r1, 0);
  pthread_join(r2, 0);
  assert(pthread_rwlock_tryrdlock(&l) == 0 && pthread_rwlock_trywrlock(&l) == EBUSY);
  pthread_rwlock_unlock(&l);
  assert(pthread_rwlock_trywrlock(&l) == 0 && pthread_rwlock_tryrdlock(&l) == EBUSY);
  pthread_rwlock_unlock(&l);
  pthread_rwlock_destroy(&l);
  return 0;
}
