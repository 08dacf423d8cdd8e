// expect: sc=safe tso=safe pso=safe
/* C11 message passing with a release store and an acquire load: the release store is
 * preceded by a fence under PSO, so the data is visible before the flag. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

int data;
atomic_int flag;

void *producer(void *arg) {
  data = 42;
  atomic_store_explicit(&flag, 1, memory_order_release);
  return 0;
}

void *consumer(void *arg) {
  if (atomic_load_explicit(&flag, memory_order_acquire) == 1)
    assert(data == 42);
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, producer, 0);
  pthread_create(&b, 0, consumer, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
