// A CAS increment: the new value is computed from the expected one; the final value
// counts the increments.
// spin-loops: 1
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

atomic_int x;

void *inc(void *arg) {
    int r = x;
    while (!atomic_compare_exchange_strong(&x, &r, r + 1))
        ;
    return 0;
}

int main(void) {
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], 0, inc, 0);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], 0);
    assert(x == 3);
    return 0;
}
