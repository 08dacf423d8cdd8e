// expect: sc=violation tso=violation pso=violation
/* An index published by one thread is used unchecked by another. */
#include <pthread.h>

int table[4];
volatile int idx;

void *writer(void *arg) { idx = 4; return 0; }

int main(void) {
  pthread_t a;
  pthread_create(&a, 0, writer, 0);
  table[idx] = 1;
  pthread_join(a, 0);
  return 0;
}
