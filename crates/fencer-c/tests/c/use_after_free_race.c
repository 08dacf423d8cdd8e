// expect: sc=violation tso=violation pso=violation
// `free` races with every access to the object: user may write through the pointer after
// owner freed it, under SC too (issue 10, item 7).
#include <pthread.h>
#include <stdlib.h>

int *volatile sp;

void *user(void *a) {
  int *q = sp;
  if (q)
    *q = 5;
  return 0;
}

void *owner(void *a) {
  int *m = malloc(sizeof(int));
  sp = m;
  free(m);
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, user, 0);
  pthread_create(&b, 0, owner, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
