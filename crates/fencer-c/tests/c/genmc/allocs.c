// Three threads each allocate, on the heap and on their stacks (an escaping local), and
// publish nothing: whatever the order of the allocations, every object and pointer is the
// same, so there is one trace.
#include <pthread.h>
#include <stdlib.h>

static void fill(int *p) { *p = 1; }

void *worker(void *arg) {
    int local;
    fill(&local);
    int *h = malloc(sizeof *h);
    fill(h);
    free(h);
    return NULL;
}

int main(void) {
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    return 0;
}
