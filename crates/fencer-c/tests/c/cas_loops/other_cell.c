// The expected value is loaded from another cell than the one the CAS acts on, and a store
// comes between a load and its loop: neither loop may be rewritten.
// spin-loops: 0
#include <pthread.h>
#include <stdatomic.h>

atomic_int x, y, z;

void *a(void *arg) {
    int r = y;
    while (!atomic_compare_exchange_strong(&x, &r, 2))
        ;
    return 0;
}

void *b(void *arg) {
    int r = x;
    z = 1;
    while (!atomic_compare_exchange_strong(&x, &r, 3))
        ;
    return 0;
}

void *c(void *arg) {
    y = 1;
    x = 1;
    return 0;
}

int main(void) {
    pthread_t t[3];
    pthread_create(&t[0], 0, a, 0);
    pthread_create(&t[1], 0, b, 0);
    pthread_create(&t[2], 0, c, 0);
    return 0;
}
