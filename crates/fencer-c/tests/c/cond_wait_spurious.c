// expect: sc=violation tso=violation pso=violation
/* pthread_cond_wait may return without a signal (POSIX: a spurious wake-up), so waiting
 * with `if` instead of `while` is a bug: the waiter can read x before main sets it.
 * (fencer once let a wait return only when signalled: issue 45, item 4;
 * --no-spurious-wakeups still does, and says so with the verdict.) */
#include <assert.h>
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int x, ready;

void *waiter(void *arg) {
  pthread_mutex_lock(&m);
  if (!ready)
    pthread_cond_wait(&c, &m);
  assert(x == 42);
  pthread_mutex_unlock(&m);
  return 0;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, waiter, 0);
  pthread_mutex_lock(&m);
  x = 42;
  ready = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  pthread_join(t, 0);
  return 0;
}
