/* Long executions: 16 threads insert 4 values each into a 128-slot hash table with open
 * addressing (Flanagan and Godefroid's "indexer"), claiming a slot with a compare-and-swap;
 * after the joins, main checks every value against every slot (8,192 loads). The races are
 * among the first events, so almost every event of an execution comes after the last race:
 * this measures what an explorer spends per event (issue 14's events-per-second benchmark).
 * Correct under SC, TSO and PSO. */
#include <assert.h>
#include <pthread.h>

#define SIZE 128
#define MAX 4
#define THREADS 16

int table[SIZE];
int ids[THREADS];

void *inserter(void *arg) {
  int tid = *(int *)arg;
  for (int m = 1; m <= MAX; m++) {
    int w = m * 11 + tid;
    int h = (w * 7) % SIZE;
    while (!__sync_bool_compare_and_swap(&table[h], 0, w)) h = (h + 1) % SIZE;
  }
  return 0;
}

int main(void) {
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) {
    ids[i] = i;
    pthread_create(&t[i], 0, inserter, &ids[i]);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
  for (int tid = 0; tid < THREADS; tid++) {
    for (int m = 1; m <= MAX; m++) {
      int w = m * 11 + tid, found = 0;
      for (int h = 0; h < SIZE; h++) found += table[h] == w;
      assert(found >= 1);
    }
  }
  return 0;
}
