// A test-and-set lock written as a CAS loop that resets its expected value to the same
// constant every time (GenMC's spin-cas3); the counter checks mutual exclusion.
// spin-loops: 1
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

atomic_int lock;
int inside;

void *worker(void *arg) {
    int r = 0;
    while (!atomic_compare_exchange_strong(&lock, &r, 1))
        r = 0;
    inside++;
    assert(inside == 1);
    inside--;
    lock = 0;
    return 0;
}

int main(void) {
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], 0, worker, 0);
    return 0;
}
