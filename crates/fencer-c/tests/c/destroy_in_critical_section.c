// expect: sc=violation tso=violation pso=violation
/* b#2 destroys the mutex once it sees the flag that a#1 sets inside its critical
 * section: if it looks before a#1 unlocks, the destroy finds the mutex locked. Plain
 * pthread calls. The engine ordered a destroy after the unlock before it, as it orders a
 * lock (which waits), but a destroy never waits: it could run before the unlock, and
 * fault. The verdict was a wrong safe under every model (found by the fourth hunt). */
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int x;

void *a(void *arg) {
  pthread_mutex_lock(&m);
  x = 1;
  pthread_mutex_unlock(&m);
  return 0;
}

void *b(void *arg) {
  if (x == 1)
    pthread_mutex_destroy(&m);
  return 0;
}

int main(void) {
  pthread_t t1, t2;
  pthread_create(&t1, 0, a, 0);
  pthread_create(&t2, 0, b, 0);
  return 0;
}
