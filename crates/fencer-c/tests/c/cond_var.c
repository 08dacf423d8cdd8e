// expect: sc=safe tso=safe pso=safe
/* A condition variable hands an item from a producer to a consumer; the consumer waits in
 * a predicate loop, as POSIX requires. */
#include <assert.h>
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int ready, item;

void *producer(void *arg) {
  pthread_mutex_lock(&m);
  item = 7;
  ready = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  return 0;
}

void *consumer(void *arg) {
  pthread_mutex_lock(&m);
  while (!ready) pthread_cond_wait(&c, &m);
  assert(item == 7);
  pthread_mutex_unlock(&m);
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&b, 0, consumer, 0);
  pthread_create(&a, 0, producer, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
