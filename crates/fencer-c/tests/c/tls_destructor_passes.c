// expect: sc=safe tso=safe pso=safe
/* POSIX's destructor passes: a destructor that sets its key again runs again, at most
 * PTHREAD_DESTRUCTOR_ITERATIONS (4) times, also after pthread_exit; a key that was deleted
 * runs no destructor; a NULL value none; and keys go in order of creation. */
#include <assert.h>
#include <pthread.h>

pthread_key_t again, deleted, order;
int runs, deleted_runs, last;

void reset(void *v) {
  runs++;
  pthread_setspecific(again, v);
}

void never(void *v) { deleted_runs++; }

void note(void *v) { last = (int)(long)v; }

void *worker(void *a) {
  pthread_setspecific(again, (void *)1);
  pthread_setspecific(deleted, (void *)1);
  pthread_setspecific(order, (void *)7);
  pthread_exit(0);
}

int main(void) {
  pthread_key_create(&again, reset);
  pthread_key_create(&deleted, never);
  pthread_key_create(&order, note);
  pthread_key_delete(deleted);
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  pthread_join(t, 0);
  assert(runs == 4);
  assert(deleted_runs == 0);
  assert(last == 7);
  return 0;
}
