// expect: sc=safe tso=safe pso=safe
/* A wait nobody ends: the execution is blocked (discarded), not explored for ever and not
 * a violation. */
#include <semaphore.h>

sem_t s;

int main(void) {
  sem_init(&s, 0, 0);
  sem_wait(&s);
  return 0;
}
