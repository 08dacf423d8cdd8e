// expect: sc=violation tso=violation pso=violation
/* Thread ids are given in creation order: here two threads each create one, so which
 * gets the smaller id depends on the order of their pthread_create calls, and both
 * orders must be explored (fencer once explored one and called this safe). */
#include <assert.h>
#include <pthread.h>

pthread_t a, b;

void *work(void *p) { return 0; }
void *t1(void *p) { pthread_create(&a, 0, work, 0); return 0; }
void *t2(void *p) { pthread_create(&b, 0, work, 0); return 0; }

int main(void) {
  pthread_t x, y;
  pthread_create(&x, 0, t1, 0);
  pthread_create(&y, 0, t2, 0);
  pthread_join(x, 0);
  pthread_join(y, 0);
  assert(a < b);
  return 0;
}
