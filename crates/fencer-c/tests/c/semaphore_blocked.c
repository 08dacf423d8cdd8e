// expect: sc=violation tso=violation pso=violation
/* A wait nobody can end: a hang, reported like a deadlock on a mutex (not an execution
 * explored for ever, not a silent discard). */
#include <semaphore.h>

sem_t s;

int main(void) {
  sem_init(&s, 0, 0);
  sem_wait(&s);
  return 0;
}
