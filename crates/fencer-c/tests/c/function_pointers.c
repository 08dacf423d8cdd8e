// expect: sc=safe tso=safe pso=safe
/* Function pointers: a table of functions, a callback, pointers stored in a struct and
 * compared, and pthread_create given a pointer variable. */
#include <assert.h>
#include <pthread.h>

int add(int a, int b) { return a + b; }
int sub(int a, int b) { return a - b; }
int (*const table[2])(int, int) = {add, sub};

struct job {
  void *(*run)(void *);
  int (*op)(int, int);
};

int apply(int (*f)(int, int), int a, int b) { return f(a, b); }

int done;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *work(void *arg) {
  struct job *j = arg;
  pthread_mutex_lock(&m);
  done += j->op(2, 1);
  pthread_mutex_unlock(&m);
  return 0;
}

int main(void) {
  assert(table[0](3, 4) == 7 && table[1](3, 4) == -1);
  assert(apply(sub, 5, 2) == 3);
  struct job j = {work, add};
  assert(j.op == add && j.op != sub && j.run == work);
  void *(*start)(void *) = j.run;
  pthread_t a, b;
  pthread_create(&a, 0, start, &j);
  pthread_create(&b, 0, j.run, &j);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(done == 6);
  return 0;
}
