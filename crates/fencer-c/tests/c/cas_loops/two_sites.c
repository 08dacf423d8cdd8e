// A retry loop with two compare-and-swaps of the same cell, one per branch on the
// expected value (GenMC's spin-2cas-join2, in our words): whichever fails, the register
// holds what it read from that cell, so an execution that fails k times is equivalent to
// one whose load before the loop reads what the k-th failure read, and only first-try
// successes are explored.
// spin-loops: 1
// sc-executions: 6
#include <pthread.h>
#include <stdatomic.h>

atomic_int x;
int got0, got1;

void *swapper(void *arg) {
    int r = x;
    for (;;) {
        if (r == 1) {
            if (atomic_compare_exchange_strong(&x, &r, 10))
                break;
        } else {
            if (atomic_compare_exchange_strong(&x, &r, 20 + r))
                break;
        }
    }
    if (arg)
        got1 = r;
    else
        got0 = r;
    return 0;
}

void *writer(void *arg) {
    x = 1;
    return 0;
}

int main(void) {
    pthread_t t[3];
    pthread_create(&t[0], 0, swapper, (void *)0);
    pthread_create(&t[1], 0, writer, 0);
    pthread_create(&t[2], 0, swapper, (void *)1);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], 0);
    return 0;
}
