// expect: sc=violation tso=violation pso=violation
/* The reader may use the object after the other thread freed it. */
#include <pthread.h>
#include <stdlib.h>

int *volatile shared;

void *reader(void *arg) { int *p = shared; if (p) return (void *)(long)*p; return 0; }

int main(void) {
  pthread_t a;
  shared = malloc(sizeof(int));
  pthread_create(&a, 0, reader, 0);
  int *p = shared;
  shared = 0;
  free(p);
  pthread_join(a, 0);
  return 0;
}
