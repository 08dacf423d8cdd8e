// expect: sc=safe tso=safe pso=safe
/* Message passing through a semaphore: sem_post is a release and sem_wait an acquire under
 * every model (PSO would otherwise let `ready` overtake `data`). */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

sem_t s;
int data, more;

void *producer(void *arg) {
  data = 42;
  more = 1;
  sem_post(&s);
  return 0;
}

int main(void) {
  pthread_t p;
  sem_init(&s, 0, 0);
  pthread_create(&p, 0, producer, 0);
  sem_wait(&s);
  assert(data == 42 && more == 1);
  int v = -1;
  sem_getvalue(&s, &v);
  assert(v == 0);
  assert(sem_trywait(&s) == -1 && errno == EAGAIN);
  sem_post(&s);
  assert(sem_trywait(&s) == 0);
  pthread_join(p, 0);
  sem_destroy(&s);
  return 0;
}
