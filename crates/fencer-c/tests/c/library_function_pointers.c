// expect: sc=safe tso=safe pso=safe
/* Library functions fencer knows, reached through pointers (a callback, a pointer to
 * pthread_create); a pointer to a function nobody defines is refused only when called. */
#include <pthread.h>
#include <stdlib.h>
#include <assert.h>
int undefined_cb(void *);
pthread_mutex_t m;
int x, flag;
void apply(int (*f)(pthread_mutex_t *), pthread_mutex_t *p) { f(p); }
void *t(void *a) { apply(pthread_mutex_lock, &m); x++; apply(pthread_mutex_unlock, &m); return 0; }
int main(void) {
  pthread_t a, b;
  int (*start)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) = pthread_create;
  start(&a, 0, t, 0); start(&b, 0, t, 0);
  pthread_join(a, 0); pthread_join(b, 0);
  assert(x == 2);
  if (flag) { int (*g)(void *) = undefined_cb; g(0); }
  return 0;
}
