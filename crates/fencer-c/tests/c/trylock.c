// expect: sc=safe tso=safe pso=safe
// Two threads try the same mutex; each enters only when it got it (issue 10: trylock once
// crashed the engine). `trylock_executions_match_the_reference` checks the count.
#include <assert.h>
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int inside, entered;

void *t(void *a) {
  if (pthread_mutex_trylock(&m) == 0) {
    inside++;
    assert(inside == 1);
    inside--;
    entered++;
    pthread_mutex_unlock(&m);
  }
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t, 0);
  pthread_create(&b, 0, t, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(entered >= 1 && entered <= 2);
  return 0;
}
