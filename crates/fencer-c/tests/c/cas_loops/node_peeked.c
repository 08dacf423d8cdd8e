// A failed iteration's store to the node is seen before the next iteration overwrites
// it: a third thread peeks at the node, and the value it reads (the stack top of the
// failed try) can only be read in executions that keep the failed iteration. So that
// iteration must not be dropped: the final states below include `peek == 0` with the
// other push below `nodes[0]`, which no execution without a failed try has.
// spin-loops: 1
#include <pthread.h>
#include <stdatomic.h>

struct node {
    struct node *_Atomic next;
};

struct node nodes[2];
struct node sentinel;
struct node *_Atomic top;
struct node *peek = &sentinel;
int under;

static void push(struct node *n) {
    while (1) {
        struct node *t = atomic_load(&top);
        atomic_store(&n->next, t);
        if (atomic_compare_exchange_strong(&top, &t, n))
            break;
    }
}

void *pusher(void *arg) {
    push(&nodes[(long)arg]);
    return 0;
}

void *peeker(void *arg) {
    peek = atomic_load(&nodes[0].next);
    return 0;
}

int main(void) {
    atomic_store(&nodes[0].next, &sentinel);
    pthread_t t[3];
    pthread_create(&t[0], 0, pusher, (void *)0);
    pthread_create(&t[1], 0, pusher, (void *)1);
    pthread_create(&t[2], 0, peeker, 0);
    pthread_join(t[0], 0);
    pthread_join(t[1], 0);
    pthread_join(t[2], 0);
    under = atomic_load(&nodes[0].next) == &nodes[1];
    return 0;
}
