// expect: sc=safe tso=safe pso=safe
/* Thread-local storage: each thread (main included) has its own copy of `__thread` and
 * `_Thread_local` variables, initialised with the declared value. Shared, the copies would
 * race and the assertions fail. */
#include <assert.h>
#include <pthread.h>

__thread int counter;
_Thread_local int start = 5;
static __thread int *mine;

void bump(int n) {
  for (int i = 0; i < n; i++)
    counter++;
}

void *worker(void *arg) {
  int n = (int)(long)arg;
  assert(start == 5 && counter == 0);
  mine = &counter;
  bump(n);
  start += n;
  assert(*mine == n && counter == n && start == 5 + n);
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, worker, (void *)1L);
  pthread_create(&b, 0, worker, (void *)2L);
  bump(3);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(counter == 3 && start == 5 && mine == 0);
  return 0;
}
