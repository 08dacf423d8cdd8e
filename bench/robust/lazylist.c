// expect: sc=safe tso=safe pso=violation
// robust: tso=yes pso=no
/* lazylist.c -- the lazy list-based set (Heller, Herlihy, Luchangco, Moir, Scherer and
 * Shavit, "A Lazy Concurrent List-Based Set Algorithm", OPODIS 2005).
 *
 * Origin: the "lazylist" benchmark of Burnim, Sen and Stergiou (TACAS'11, section 7,
 * Tables 1 and 2; 120 LOC there), taken from CheckFence (Burckhardt, Alur and Martin,
 * PLDI'07). A sorted singly linked list between two sentinels (keys -inf and +inf), one
 * lock per node and a `marked` flag per node. add and remove traverse without locks,
 * lock pred and curr, validate (neither marked, pred->next == curr) and retry if that
 * fails; remove marks the node (logical deletion) before unlinking it (physical
 * deletion). contains is wait-free: it traverses without locks and answers
 * `curr->key == key && !curr->marked`.
 *
 * Simplifications: removed nodes are not freed (as in the paper's garbage-collected
 * setting); the sentinels are set up by main before the threads start.
 *
 * Locks: the paper's machine model treats lock and unlock as atomic operations on the
 * lock's own address: under TSO they drain the thread's whole store buffer (x86 locked
 * instructions), under PSO only the buffer of the lock word. fencer's pthread_mutex_lock/
 * unlock drain EVERY buffer under PSO (docs/c.md), a full barrier (and a pthread mutex
 * per malloc'd node would have to be initialised with pthread_mutex_init). So each node's
 * lock is a spinlock word: acquire a loop of `__atomic_compare_exchange_n(l, &free, 1,
 * 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)`, release `__atomic_exchange_n(l, 0,
 * __ATOMIC_RELAXED)` --
 * read-modify-writes weaker than release, which fencer maps to the paper's atm(p, l, f):
 * TSO drains the buffer, PSO drains only the channel of `l`.
 *
 * (The acquire is a CAS loop, not a test-and-set exchange loop: a failed CAS only reads,
 * so fencer's spin-loop pruning drops it, while each failed exchange writes the lock
 * word and multiplies the traces -- 223,582 SC executions against 252 for two threads
 * taking a lock 5 times each.)
 *
 * Harness: the set starts as {2}. Thread A: add(1), remove(2). Thread B: remove(1),
 * add(3), contains(1). Checks (hold under SC, by linearizability of a set): A's add(1)
 * and remove(2) and B's add(3) succeed (each key has one adder or one remover); if B
 * removed 1 its later contains(1) is false; after both joins the set is {3} or {1, 3}
 * (1 in it exactly when B's remove failed); the list is sorted with no marked node.
 * Traversals and retries are bounded by assertions SC never reaches (MAX_HOPS,
 * MAX_TRIES): without them PSO executions that break the list run in circles and
 * `--all` under PSO never ends.
 *
 * Expected robustness:
 *   TSO: robust. Every plain store to shared memory is made while holding the locks of
 *        the nodes concerned (or initialises a node not yet reachable) and is followed,
 *        before any load another thread can race with, by the unlocking read-modify-write
 *        that drains the buffer. The one load between a buffered store and the unlock is
 *        remove's read of curr->next after `curr->marked = 1`, and curr->next is written
 *        only under curr's lock, so no other thread can write it meanwhile.
 *   PSO: NOT robust. add initialises the new node (key, next, marked, lock word) with
 *        plain stores and links it with `pred->next = node`; the unlock drains only the
 *        lock word, so `pred->next` can reach memory first and the other thread
 *        (traversing in remove or contains) reads the node's key, next or marked before
 *        they are written -- a `read of uninitialised memory` (malloc memory) in fencer,
 *        so `fencer check --model pso` says violation. Likewise remove's
 *        `pred->next = curr->next` can overtake `curr->marked = 1`. */
#include <assert.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

struct node {
  int key;
  struct node *next;
  int marked;
  int lock; /* spinlock word: 0 free, 1 held */
};

struct node *Head; /* set up by main, never changes */

#define V(p) ((volatile struct node *)(p))

static void lock(struct node *n) {
  while (1) {
    int free_ = 0;
    if (__atomic_compare_exchange_n(&n->lock, &free_, 1, 0, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED))
      break;
  }
}
static void unlock(struct node *n) { __atomic_exchange_n(&n->lock, 0, __ATOMIC_RELAXED); }

static struct node *new_node(int key, struct node *next) {
  struct node *n = malloc(sizeof *n);
  n->key = key;
  n->next = next;
  n->marked = 0;
  n->lock = 0;
  return n;
}

/* Loop bounds that SC executions never reach (the list holds at most 5 nodes, and an
   operation retries only after the other thread changed pred or curr, at most 3 times):
   they only cut the weak executions that run in circles over a list PSO has broken. */
#define MAX_HOPS 8
#define MAX_TRIES 8
#define HOP(h) assert(++(h) <= MAX_HOPS)
#define TRY(t) assert(++(t) <= MAX_TRIES)

static int validate(struct node *pred, struct node *curr) {
  return !V(pred)->marked && !V(curr)->marked && V(pred)->next == curr;
}

static int add(int key) {
  int tries = 0;
  while (1) {
    TRY(tries);
    int hops = 0;
    struct node *pred = Head;
    struct node *curr = V(pred)->next;
    while (V(curr)->key < key) {
      HOP(hops);
      pred = curr;
      curr = V(curr)->next;
    }
    lock(pred);
    lock(curr);
    if (validate(pred, curr)) {
      int ok = 0;
      if (V(curr)->key != key) {
        struct node *node = new_node(key, curr);
        V(pred)->next = node;
        ok = 1;
      }
      unlock(curr);
      unlock(pred);
      return ok;
    }
    unlock(curr);
    unlock(pred);
  }
}

static int remove_key(int key) {
  int tries = 0;
  while (1) {
    TRY(tries);
    int hops = 0;
    struct node *pred = Head;
    struct node *curr = V(pred)->next;
    while (V(curr)->key < key) {
      HOP(hops);
      pred = curr;
      curr = V(curr)->next;
    }
    lock(pred);
    lock(curr);
    if (validate(pred, curr)) {
      int ok = 0;
      if (V(curr)->key == key) {
        V(curr)->marked = 1;          /* logical deletion */
        V(pred)->next = V(curr)->next; /* physical deletion */
        ok = 1;
      }
      unlock(curr);
      unlock(pred);
      return ok;
    }
    unlock(curr);
    unlock(pred);
  }
}

static int contains(int key) {
  int hops = 0;
  struct node *curr = Head;
  while (V(curr)->key < key) {
    HOP(hops);
    curr = V(curr)->next;
  }
  return V(curr)->key == key && !V(curr)->marked;
}

void *thread_a(void *arg) {
  assert(add(1));        /* 1 is absent at first and only A adds it */
  assert(remove_key(2)); /* 2 is present at first and only A removes it */
  return 0;
}

void *thread_b(void *arg) {
  int removed = remove_key(1);
  assert(add(3)); /* only B adds 3 */
  int c1 = contains(1);
  assert(!(removed && c1)); /* nobody adds 1 after A's add */
  return (void *)(long)removed;
}

int main(void) {
  struct node *tail = new_node(INT_MAX, NULL);
  Head = new_node(INT_MIN, tail);
  V(Head)->next = new_node(2, tail); /* the set is {2} */
  pthread_t a, b;
  void *r;
  pthread_create(&a, 0, thread_a, 0);
  pthread_create(&b, 0, thread_b, 0);
  pthread_join(a, 0);
  pthread_join(b, &r);
  int removed = (int)(long)r;
  assert(!contains(2));
  assert(contains(3));
  assert(contains(1) == !removed);
  /* sorted, no marked node left reachable */
  for (struct node *n = Head; n != tail; n = n->next) {
    assert(!n->marked);
    assert(n->key < n->next->key);
  }
  return 0;
}
