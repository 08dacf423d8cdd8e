// expect: sc=violation tso=violation pso=violation
/* A heap mutex freed while a#1 holds it: b#2's lock after the free is a use after free,
 * and before a#1's lock it takes the mutex (a#1 then waits for ever). Between the two it
 * cannot run (the mutex is held): its lock after the free races with a#1's lock, through
 * the free, not with the free. The engine once planned it just before the free (with
 * --all, an internal error since the enabled check). */
#include <pthread.h>
#include <stdlib.h>

pthread_mutex_t *p;
int x, y, z;

void *a(void *arg) {
  pthread_mutex_lock(p);
  x = 1;
  free(p);
  return 0;
}

void *b(void *arg) {
  pthread_mutex_lock(p);
  y = 1;
  x = 2;
  return 0;
}

void *c(void *arg) {
  z = x;
  return 0;
}

int main(void) {
  pthread_t t1, t2, t3;
  p = malloc(sizeof *p);
  pthread_mutex_init(p, 0);
  pthread_create(&t1, 0, a, 0);
  pthread_create(&t2, 0, b, 0);
  pthread_create(&t3, 0, c, 0);
  return 0;
}
