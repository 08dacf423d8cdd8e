// expect: sc=safe tso=safe pso=safe
/* A deleted TLS key's slot is used again (so a program may create and delete keys many
 * times), a value set before the key was deleted reads as NULL afterwards, and at thread
 * exit every non-NULL value is cleared, also of a key without a destructor, before the
 * destructors run (glibc's order). */
#include <assert.h>
#include <pthread.h>

pthread_key_t plain, checked;

void check(void *v) { assert(pthread_getspecific(plain) == 0); }

void *worker(void *a) {
  pthread_setspecific(plain, (void *)1);
  pthread_setspecific(checked, (void *)2);
  return 0;
}

int main(void) {
  for (int i = 0; i < 10; i++) {
    pthread_key_t k;
    assert(pthread_key_create(&k, 0) == 0);
    pthread_setspecific(k, (void *)5);
    assert(pthread_key_delete(k) == 0);
    assert(pthread_getspecific(k) == 0);
  }
  pthread_key_create(&plain, 0);
  pthread_key_create(&checked, check);
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  pthread_join(t, 0);
  return 0;
}
