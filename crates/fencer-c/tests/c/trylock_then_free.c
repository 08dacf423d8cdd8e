// expect: sc=violation tso=violation pso=violation
/* A trylock that fails on a held heap mutex, which its holder then frees: after the free,
 * the trylock is a use after free. The failed trylock reads the mutex, and so the
 * object's life: it races with the free (with --all, Optimal-DPOR on one worker once
 * missed the final states where the trylock fails before the free). */
#include <pthread.h>
#include <stdlib.h>

pthread_mutex_t *p;
int x;

void *a(void *arg) {
  pthread_mutex_lock(p);
  x = 1;
  free(p);
  return 0;
}

void *b(void *arg) {
  int r = pthread_mutex_trylock(p);
  x = 2 + r;
  return 0;
}

int main(void) {
  pthread_t t1, t2;
  p = malloc(sizeof *p);
  pthread_mutex_init(p, 0);
  pthread_create(&t1, 0, a, 0);
  pthread_create(&t2, 0, b, 0);
  return 0;
}
