// A Treiber-style stack written for GenMC: threads spawned and joined with its API, a
// hazard-pointer read, an optional wait and annotated CASes. A pusher and a popper.
#include <genmc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <assert.h>

struct node { int v; struct node *next; };
_Atomic(struct node *) top;
atomic_int popped;

static void wait_nonempty(void) {
    while (atomic_load(&top) == NULL)
        ;
}

void *push(void *arg) {
    struct node *n = malloc(sizeof *n);
    n->v = (int)(long)arg;
    struct node *t;
    do {
        t = atomic_load(&top);
        n->next = t;
    } while (!atomic_compare_exchange_strong(&top, &t, n));
    return NULL;
}

void *pop(void *arg) {
    __VERIFIER_hp_t *hp = __VERIFIER_hp_alloc();
    __VERIFIER_optional(wait_nonempty());
    struct node *t = __VERIFIER_hp_protect(hp, &top);
    if (t == NULL)
        return NULL;
    if (__VERIFIER_final_CAS(atomic_compare_exchange_strong(&top, &t, t->next))) {
        __VERIFIER_final_write(atomic_store(&popped, t->v));
        __VERIFIER_hp_retire(t);
    }
    __VERIFIER_hp_clear(hp);
    return NULL;
}

int main(void) {
    __VERIFIER_thread_t a = __VERIFIER_spawn(push, (void *)1);
    __VERIFIER_thread_t c = __VERIFIER_spawn(pop, NULL);
    __VERIFIER_join(a);
    __VERIFIER_join(c);
    int p = atomic_load(&popped);
    __VERIFIER_assume(p != 0);
    assert(p == 1);
    return 0;
}
