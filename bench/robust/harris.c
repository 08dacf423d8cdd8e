// expect: sc=safe tso=safe pso=violation
// robust: tso=yes pso=no
/* harris.c -- Harris's non-blocking linked-list set (T. Harris, "A Pragmatic
 * Implementation of Non-Blocking Linked-Lists", DISC 2001).
 *
 * Origin: the "harris" benchmark of Burnim, Sen and Stergiou (TACAS'11, section 7,
 * Tables 1 and 2; 160 LOC there), taken from CheckFence (Burckhardt, Alur and Martin,
 * PLDI'07). A sorted singly linked list between sentinels head and tail. A node is
 * deleted logically by setting the low bit of its own `next` pointer with CAS (a marked
 * pointer), then physically by a CAS on its predecessor's `next`; `search` returns
 * adjacent unmarked left and right nodes around a key, snipping out runs of marked nodes
 * it meets with one CAS. insert links a new node with a CAS on left->next.
 *
 * Marked pointers are the real thing: `(struct node *)((uintptr_t)p | 1)` and back with
 * `& ~1` (fencer models pointer/integer casts and low-bit tagging exactly; nodes are
 * at least 2-aligned).
 *
 * Simplifications: no memory reclamation (deleted nodes are never freed, so no ABA);
 * the sentinels are set up by main before the threads start.
 *
 * Compare-and-swap: the paper's machine model treats CAS as an atomic operation on ONE
 * address: under TSO it drains the whole store buffer (x86 locked instruction), under PSO
 * only the buffer of the address it updates. In fencer every `__sync_*` builtin is
 * seq_cst, and a seq_cst (or release) read-modify-write under PSO first drains EVERY
 * buffer (docs/c.md) -- a full barrier that would hide the PSO bug. So CAS here is
 * `__atomic_compare_exchange_n(..., __ATOMIC_RELAXED, __ATOMIC_RELAXED)`, which fencer
 * maps to exactly the paper's atm(p, a, f). It goes through uintptr_t because a
 * pointer-typed one makes clang -O0 spill the operands into stack temporaries, and
 * fencer numbers memory objects in creation order across threads, so every interleaving
 * of those allocations would be a trace of its own (9,898 executions under SC for a smaller
 * harness, against 66).
 *
 * Harness: the set starts as {1, 3}. Thread A: insert(2) (links the new node after
 * node 1, which B may be deleting at the same time -- the race marked pointers are there
 * for), then delete(3). Thread B: delete(1), then find(2), which walks past A's new node
 * if it is there. Checks (hold under SC): every insert and delete succeeds (each key has
 * one inserter or one deleter); after both joins find(1) and find(3) are false and
 * find(2) is true (the insert next to the deleted node is not lost), and the list is
 * head -> 2 -> tail (the finds have snipped out the marked nodes).
 *
 * Expected robustness:
 *   TSO: robust. The only plain stores to shared memory initialise a new node (key,
 *        next) before the CAS that publishes it (the CAS drains the buffer; until then
 *        no other thread can reach the node). Every other shared write is a CAS, and
 *        results stay in registers.
 *   PSO: NOT robust. `new->key = key; new->next = right` are to other addresses than
 *        the CAS on left->next that publishes the node, so they can still be buffered
 *        when B (find(2), or a search while deleting) reaches the node and reads its
 *        key and next -- a `read of uninitialised memory` (malloc memory) in fencer, so
 *        `fencer check --model pso` says violation. Under SC the link is written after
 *        the fields. */
#include <assert.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

struct node {
  int key;
  struct node *next; /* low bit set: this node is logically deleted */
};

struct node *Head, *Tail; /* sentinels, set up by main, never change */

#define V(p) ((volatile struct node *)(p))
#define is_marked(p) (((uintptr_t)(p)) & 1)
#define marked(p) ((struct node *)(((uintptr_t)(p)) | 1))
#define unmarked(p) ((struct node *)(((uintptr_t)(p)) & ~(uintptr_t)1))

/* Loop bounds that SC executions never reach (at most 5 nodes; a retry follows a change
   by the other thread): they only cut weak executions that run in circles. */
#define MAX_HOPS 8
#define MAX_TRIES 8

/* The paper's CAS: atomic on one address (see the header). */
static int cas(struct node **addr, struct node *expected, struct node *desired) {
  uintptr_t e = (uintptr_t)expected;
  return __atomic_compare_exchange_n((uintptr_t *)addr, &e, (uintptr_t)desired, 0,
                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static struct node *search(int key, struct node **left_out) {
  struct node *left = 0, *left_next = 0, *right;
  int tries = 0;
  while (1) {
    assert(++tries <= MAX_TRIES);
    int hops = 0;
    struct node *t = Head;
    struct node *t_next = V(Head)->next;
    /* 1: find left and right */
    do {
      assert(++hops <= MAX_HOPS);
      if (!is_marked(t_next)) {
        left = t;
        left_next = t_next;
      }
      t = unmarked(t_next);
      if (t == Tail) break;
      t_next = V(t)->next;
    } while (is_marked(t_next) || V(t)->key < key);
    right = t;
    /* 2: adjacent? */
    if (left_next == right) {
      if (right != Tail && is_marked(V(right)->next)) continue;
      *left_out = left;
      return right;
    }
    /* 3: snip out the marked nodes between left and right */
    if (cas(&left->next, left_next, right)) {
      if (right != Tail && is_marked(V(right)->next)) continue;
      *left_out = left;
      return right;
    }
  }
}

static int insert(int key) {
  struct node *node = malloc(sizeof *node);
  node->key = key;
  struct node *left, *right;
  int tries = 0;
  while (1) {
    assert(++tries <= MAX_TRIES);
    right = search(key, &left);
    if (right != Tail && V(right)->key == key) return 0;
    node->next = right;
    if (cas(&left->next, right, node)) return 1;
  }
}

static int delete(int key) {
  struct node *left, *right, *right_next;
  int tries = 0;
  while (1) {
    assert(++tries <= MAX_TRIES);
    right = search(key, &left);
    if (right == Tail || V(right)->key != key) return 0;
    right_next = V(right)->next;
    if (!is_marked(right_next))
      if (cas(&right->next, right_next, marked(right_next))) break; /* logical */
  }
  if (!cas(&left->next, right, right_next)) /* physical */
    search(V(right)->key, &left);
  return 1;
}

static int find(int key) {
  struct node *left;
  struct node *right = search(key, &left);
  return right != Tail && V(right)->key == key;
}

void *thread_a(void *arg) {
  int ok = insert(2);
  assert(ok); /* only A inserts 2 */
  ok = delete(3);
  assert(ok); /* only A deletes 3 */
  return 0;
}

void *thread_b(void *arg) {
  int ok = delete(1);
  assert(ok); /* only B deletes 1 */
  find(2);    /* either answer is right; it walks past A's new node */
  return 0;
}

static struct node *new_node(int key, struct node *next) {
  struct node *n = malloc(sizeof *n);
  n->key = key;
  n->next = next;
  return n;
}

int main(void) {
  Tail = new_node(INT_MAX, NULL);
  Head = new_node(INT_MIN, new_node(1, new_node(3, Tail))); /* the set is {1, 3} */
  pthread_t a, b;
  pthread_create(&a, 0, thread_a, 0);
  pthread_create(&b, 0, thread_b, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(!find(1));
  assert(!find(3));
  assert(find(2)); /* the insert next to the deleted node is not lost */
  /* head -> 2 -> tail: the searches of the finds above snipped out nodes 1 and 3 */
  struct node *n = Head->next;
  assert(n->key == 2 && n->next == Tail);
  return 0;
}
