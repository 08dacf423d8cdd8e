// A test-and-set lock that returns from inside its retry loop (GenMC's ttaslock-opt): a
// failed exchange writes back the 1 it read, so the iteration is pure, and the return
// leaves the loop like a jump out.
// spin-loops: 1
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

atomic_int state;
int inside;

static void acquire(void) {
    while (1) {
        if (!atomic_exchange_explicit(&state, 1, memory_order_acquire))
            return;
    }
}

void *worker(void *arg) {
    acquire();
    inside++;
    assert(inside == 1);
    inside--;
    atomic_store_explicit(&state, 0, memory_order_release);
    return 0;
}

int main(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], 0, worker, 0);
    return 0;
}
