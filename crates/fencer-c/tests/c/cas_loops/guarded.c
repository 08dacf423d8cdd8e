// Waiting loops whose registers are live at the head, so that only a comparison at run
// time can tell whether an iteration changed anything (GenMC's spin+phi-header, and
// `b = 1; while (...) b = 0;` with `b` read after the loop): an iteration that leaves
// them as they were is dropped, one that changes them is kept. `flag` = 0 needs the
// marker's first iteration, which changes `b`; its later ones change nothing.
// spin-loops: 2
// sc-executions: 8
#include <pthread.h>
#include <stdatomic.h>

atomic_int x;
int seen, flag;

void *waiter(void *arg) {
    int ok = 0;
    while (!ok)
        ok = x;
    seen = ok;
    return 0;
}

void *marker(void *arg) {
    int b = 1;
    while (atomic_load(&x) == 0)
        b = 0;
    flag = b;
    return 0;
}

void *writer(void *arg) {
    x = 1;
    x = 2;
    return 0;
}

int main(void) {
    pthread_t t[3];
    pthread_create(&t[0], 0, waiter, 0);
    pthread_create(&t[1], 0, writer, 0);
    pthread_create(&t[2], 0, marker, 0);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], 0);
    return 0;
}
