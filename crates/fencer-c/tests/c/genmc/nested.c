// Loops inside loops and inside a function called in a loop: `--unroll N` bounds each
// entry of a loop, so INNER iterations inside OUTER ones pass under --unroll max(INNER,
// OUTER) and the sum (OUTER * INNER) is never what is bounded.
#include <pthread.h>
#include <assert.h>
#ifndef INNER
#define INNER 3
#endif
#define OUTER 3

int x;

static void count(void) {
    for (int j = 0; j < INNER; j++)
        x++;
}

void *worker(void *arg) {
    for (int i = 0; i < OUTER; i++)
        for (int j = 0; j < INNER; j++)
            x++;
    for (int i = 0; i < OUTER; i++)
        count();
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    assert(x == 2 * OUTER * INNER);
    return 0;
}
