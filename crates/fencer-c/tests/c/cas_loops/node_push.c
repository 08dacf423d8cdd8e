// Treiber pushes that prepare their node inside the retry loop (`n->next = top`): a
// failed iteration stores to the node, but the next one overwrites that store before
// anyone reads it, so the failed iteration changed nothing and is dropped. Under SC
// two pushes then take 2 executions, one per order (4 if failed iterations were kept);
// the stack's final shape is the same either way. The node is malloc'd, and the CAS
// reaches its temporaries through casts, as clang emits `__atomic` builtins at -O0.
// spin-loops: 1
// sc-executions: 2
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct node {
    int value;
    struct node *_Atomic next;
};

struct node *_Atomic top;
int first, second;

static void push(int v) {
    struct node *n = malloc(sizeof *n);
    n->value = v;
    while (1) {
        struct node *t = atomic_load(&top);
        atomic_store_explicit(&n->next, t, memory_order_relaxed);
        if (atomic_compare_exchange_strong(&top, &t, n))
            break;
    }
}

void *pusher(void *arg) {
    push((int)(long)arg);
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, pusher, (void *)1);
    pthread_create(&b, 0, pusher, (void *)2);
    pthread_join(a, 0);
    pthread_join(b, 0);
    struct node *n = atomic_load(&top);
    first = n->value;
    second = atomic_load(&n->next)->value;
    assert(atomic_load(&atomic_load(&n->next)->next) == 0);
    return 0;
}
