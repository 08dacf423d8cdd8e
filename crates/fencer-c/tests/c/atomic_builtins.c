// expect: sc=safe tso=safe pso=safe
/* __atomic and __sync read-modify-writes on a shared counter: every increment survives. */
#include <assert.h>
#include <pthread.h>

int counter;
unsigned char bits;
long maxv;

void *worker(void *arg) {
  long id = (long)arg;
  __atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST);
  __sync_fetch_and_add(&counter, 2);
  __atomic_fetch_or(&bits, (unsigned char)(1u << id), __ATOMIC_RELAXED);
  long seen = __atomic_exchange_n(&maxv, id, __ATOMIC_ACQ_REL);
  (void)seen;
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, worker, (void *)1);
  pthread_create(&b, 0, worker, (void *)7);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(counter == 6);
  assert(bits == 0x82);
  assert(maxv == 1 || maxv == 7);
  return 0;
}
