// expect: sc=safe tso=safe pso=safe
/* pthread_once runs its function once, and late callers see its effects; thread-specific
 * values are per thread; pthread_equal, pthread_detach. */
#include <assert.h>
#include <pthread.h>

pthread_once_t once = PTHREAD_ONCE_INIT;
pthread_key_t key;
int inits, table;

void init(void) {
  inits++;
  table = 7;
  pthread_key_create(&key, 0);
}

void *t(void *arg) {
  pthread_once(&once, init);
  assert(inits == 1 && table == 7);
  assert(pthread_getspecific(key) == 0);
  pthread_setspecific(key, arg);
  assert(pthread_getspecific(key) == arg);
  assert(pthread_equal(pthread_self(), pthread_self()));
  return 0;
}

int main(void) {
  pthread_t a, b;
  int x, y;
  pthread_create(&a, 0, t, &x);
  pthread_create(&b, 0, t, &y);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(!pthread_equal(a, b));
  pthread_detach(a);
  assert(pthread_getspecific(key) == 0);
  pthread_key_delete(key);
  return 0;
}
