// The near miss of `two_sites.c`: the second branch's compare-and-swap is of another
// cell, so what the register holds after a failure is not always a value of the cell
// loaded before the loop, and the loop stays a loop.
// spin-loops: 0
#include <pthread.h>
#include <stdatomic.h>

atomic_int x, y;
int got0, got1;

void *swapper(void *arg) {
    int r = x;
    for (;;) {
        if (r == 1) {
            if (atomic_compare_exchange_strong(&x, &r, 10))
                break;
        } else {
            if (atomic_compare_exchange_strong(&y, &r, 20 + r))
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
