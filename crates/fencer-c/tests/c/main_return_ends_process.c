// expect: sc=safe tso=safe pso=safe
/* Returning from main calls exit (C11 5.1.2.2.3): the process ends and no thread runs
 * after it, so main's locals are alive for as long as any thread can read them. (fencer
 * once let threads run on after main returned and reported this read as a use after
 * free: issue 45, item 5.) */
#include <assert.h>
#include <pthread.h>

void *reader(void *p) {
  int *x = p;
  assert(*x == 1);
  return 0;
}

int main(void) {
  int local = 1;
  pthread_t t;
  pthread_create(&t, 0, reader, &local);
  return 0;
}
