// expect: sc=violation tso=violation pso=violation
/* A semaphore initialised to 2 lets two threads into the section at once. */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>

sem_t s;
int inside;

void *t(void *arg) {
  sem_wait(&s);
  inside++;
  assert(inside == 1);
  inside--;
  sem_post(&s);
  return 0;
}

int main(void) {
  pthread_t a, b;
  sem_init(&s, 0, 2);
  pthread_create(&a, 0, t, 0);
  pthread_create(&b, 0, t, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
