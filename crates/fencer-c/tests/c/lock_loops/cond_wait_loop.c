/* A consumer waits in the usual predicate loop; with spurious wake-ups each pass gives
 * the mutex back and takes it again, and a pass in which no other thread touched the
 * mutex is dropped like a spin-loop iteration. Without a macro a producer sets the
 * predicate under the mutex: safe. With -DOBSERVE an observer, once the consumer holds
 * the mutex, reads its word (0 when free, docs/c.md) and then sets the predicate; main
 * asserts it never saw the mutex free, which it can, inside a pass of the wait: that pass
 * must not be dropped. */
#include <assert.h>
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
volatile int ready, started;
int item, seen = -1;

void *consumer(void *arg) {
  pthread_mutex_lock(&m);
  started = 1;
  while (!ready)
    pthread_cond_wait(&c, &m);
#ifndef OBSERVE
  assert(item == 7);
#endif
  pthread_mutex_unlock(&m);
  return 0;
}

void *producer(void *arg) {
  pthread_mutex_lock(&m);
  item = 7;
  ready = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  return 0;
}

void *observer(void *arg) {
  while (!started) {
  }
  seen = *(volatile int *)&m;
  ready = 1;
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, consumer, 0);
#ifdef OBSERVE
  pthread_create(&b, 0, observer, 0);
#else
  pthread_create(&b, 0, producer, 0);
#endif
  pthread_join(a, 0);
  pthread_join(b, 0);
#ifdef OBSERVE
  assert(seen != 0);
#endif
  return 0;
}
