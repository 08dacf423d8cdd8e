// The loaded value is also kept in another variable that is read after the loop: moving
// the load would change it, so the loop must stay as it is.
// spin-loops: 0
#include <pthread.h>
#include <stdatomic.h>

atomic_int x;
int seen[2];

void *swapper(void *arg) {
    int id = (int)(long)arg;
    int r = x;
    int first = r;
    while (!atomic_compare_exchange_strong(&x, &r, 7 + id))
        ;
    seen[id] = first;
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
    return 0;
}
