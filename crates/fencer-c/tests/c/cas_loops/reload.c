// A compare-and-swap retry loop whose expected value is what the last failed CAS read,
// first loaded from the same cell (GenMC's spin-cas2, in our words).
// spin-loops: 1
#include <pthread.h>
#include <stdatomic.h>

atomic_int x;

void *swapper(void *arg) {
    int r = x;
    while (!atomic_compare_exchange_strong(&x, &r, 42))
        ;
    return 0;
}

void *writer(void *arg) {
    x = 1;
    return 0;
}

int main(void) {
    pthread_t t[4];
    pthread_create(&t[0], 0, swapper, 0);
    pthread_create(&t[1], 0, swapper, 0);
    pthread_create(&t[2], 0, writer, 0);
    pthread_create(&t[3], 0, swapper, 0);
    return 0;
}
