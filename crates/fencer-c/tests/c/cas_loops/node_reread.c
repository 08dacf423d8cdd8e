// The retry loop reads back what its last try stored into the node before storing the
// new top, and publishes that read: a failed try's store is read by the thread's own next
// iteration, so the failed try matters (`again` is 1 only in executions that keep one).
// spin-loops: 1
#include <pthread.h>
#include <stdatomic.h>

struct node {
    struct node *_Atomic next;
};

struct node nodes[2];
struct node sentinel;
struct node *_Atomic top;
_Atomic int again;

static void push(struct node *n) {
    while (1) {
        struct node *t = atomic_load(&top);
        if (atomic_load(&n->next) != &sentinel)
            atomic_store(&again, 1);
        atomic_store(&n->next, t);
        if (atomic_compare_exchange_strong(&top, &t, n))
            break;
    }
}

void *pusher(void *arg) {
    push(&nodes[(long)arg]);
    return 0;
}

int main(void) {
    atomic_store(&nodes[0].next, &sentinel);
    atomic_store(&nodes[1].next, &sentinel);
    pthread_t t[2];
    pthread_create(&t[0], 0, pusher, (void *)0);
    pthread_create(&t[1], 0, pusher, (void *)1);
    return 0;
}
