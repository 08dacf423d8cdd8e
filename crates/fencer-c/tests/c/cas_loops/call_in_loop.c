// A test-and-test-and-set lock whose waiting and trying are functions the retry loop
// calls (GenMC's spinlock test): the callee's frame is gone when the loop comes back, so
// an iteration whose await read 0 and whose CAS then failed changed nothing. The
// `owner` register is read after the loop, so the loop that writes it is compared at its
// back edge (and its fetch-add makes every iteration count anyway).
// spin-loops: 3
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

atomic_int lock;
atomic_int turns;
int inside;

static void await_free(void) {
    while (atomic_load_explicit(&lock, memory_order_relaxed) != 0)
        ;
}

static int try_get(void) {
    int expected = 0;
    return atomic_compare_exchange_strong(&lock, &expected, 1);
}

static int count_turn(void) { return atomic_fetch_add(&turns, 1); }

void *worker(void *arg) {
    do {
        await_free();
    } while (!try_get());
    inside++;
    assert(inside == 1);
    inside--;
    lock = 0;
    int owner = -1;
    while (owner < 0)
        owner = count_turn();
    return (void *)(long)owner;
}

int main(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], 0, worker, 0);
    return 0;
}
