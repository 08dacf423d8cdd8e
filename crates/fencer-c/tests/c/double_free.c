// expect: sc=violation tso=violation pso=violation
/* Both threads free the same object when they both see the flag unset. */
#include <pthread.h>
#include <stdlib.h>

int *obj;
volatile int done;

void *t(void *arg) { if (!done) { done = 1; free(obj); } return 0; }

int main(void) {
  pthread_t a, b;
  obj = malloc(4);
  pthread_create(&a, 0, t, 0);
  pthread_create(&b, 0, t, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
