// expect: sc=violation tso=violation pso=violation
/* A TLS key's destructor runs when a thread's start function returns, with the thread's
 * value: here the worker's 42 fails the destructor's assertion. main's value (16) is never
 * passed to it: returning from main ends the process, which runs no destructors. (fencer
 * once never ran destructors: issue 45, item 3.) */
#include <assert.h>
#include <pthread.h>

void dtor(void *v) {
  long val = (long)v;
  assert(val != 42);
}

void *worker(void *k) {
  pthread_key_t *key = k;
  pthread_setspecific(*key, (void *)42);
  return 0;
}

int main(void) {
  pthread_key_t key;
  pthread_key_create(&key, dtor);
  pthread_t t;
  pthread_create(&t, 0, worker, &key);
  pthread_setspecific(key, (void *)16);
  pthread_join(t, 0);
  return 0;
}
