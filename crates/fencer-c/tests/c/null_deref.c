// expect: sc=violation tso=violation pso=violation
/* The pointer may still be null when the reader dereferences it. */
#include <pthread.h>

int value = 5;
int *volatile ptr;

void *init(void *arg) { ptr = &value; return 0; }

int main(void) {
  pthread_t a;
  pthread_create(&a, 0, init, 0);
  int v = *ptr;
  pthread_join(a, 0);
  return v - 5;
}
