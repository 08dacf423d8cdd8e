// A test-and-set lock with exponential back-off guarding a counter, in threads that
// main creates for ever: no assertion fails, for any number of threads.
// -DRELEASE_EARLY lets the lock go before the check (a violation with two threads);
// -DTHREADS=N creates N threads only, for comparing with DPOR.
#include <assert.h>
#include <pthread.h>

volatile int lock = 0;
int count = 0;

void __VERIFIER_atomic_test_and_set(volatile int *word, int *old) {
  *old = *word;
  *word = 1;
}

void acquire(void) {
  unsigned backoff = 1;
  int was;
  __VERIFIER_atomic_test_and_set(&lock, &was);
  while (was == 1) {
    if (backoff * 2 > backoff)
      backoff *= 2;
    __VERIFIER_atomic_test_and_set(&lock, &was);
  }
}

void release(void) { lock = 0; }

void *worker(void *arg) {
  for (;;) {
    acquire();
    count++;
#ifdef RELEASE_EARLY
    release();
    assert(count == 1);
    count--;
#else
    assert(count == 1);
    count--;
    release();
#endif
  }
  return 0;
}

int main(void) {
  pthread_t t;
#ifdef THREADS
  for (int i = 0; i < THREADS; i++)
#else
  while (1)
#endif
    pthread_create(&t, 0, worker, 0);
  return 0;
}
