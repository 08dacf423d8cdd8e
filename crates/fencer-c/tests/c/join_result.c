// expect: sc=safe tso=safe pso=safe
/* pthread_join hands back what the thread function returned or passed to pthread_exit,
 * also for a thread started through a function pointer; after the join, the thread's
 * stores are visible under every model. */
#include <assert.h>
#include <pthread.h>

int data[2];

void *square(void *arg) {
  long n = (long)arg;
  data[0] = 1;
  return (void *)(n * n);
}

void *quits(void *arg) {
  data[1] = 2;
  pthread_exit((void *)7L);
  return 0;
}

int main(void) {
  pthread_t a, b, c;
  void *(*f)(void *) = square;
  void *ra, *rb, *rc;
  pthread_create(&a, 0, square, (void *)3L);
  pthread_create(&b, 0, quits, 0);
  pthread_create(&c, 0, f, (void *)4L);
  pthread_join(a, &ra);
  pthread_join(b, &rb);
  pthread_join(c, &rc);
  assert((long)ra == 9 && (long)rb == 7 && (long)rc == 16);
  assert(data[0] == 1 && data[1] == 2);
  return 0;
}
