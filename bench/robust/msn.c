// expect: sc=safe tso=safe pso=violation
// robust: tso=yes pso=no
/* msn.c -- the Michael-Scott non-blocking queue (Michael and Scott, PODC'96: "Simple,
 * fast, and practical non-blocking and blocking concurrent queue algorithms", figure 1).
 *
 * Origin: the "msn" benchmark of Burnim, Sen and Stergiou (TACAS'11, section 7, Tables 1
 * and 2; 80 LOC there), taken from CheckFence (Burckhardt, Alur and Martin, PLDI'07).
 * A singly linked list with a dummy node; Head points to the dummy, Tail to the last or
 * second-to-last node. Enqueue links a new node after the last one with CAS and then
 * swings Tail (helping a lagging Tail first); dequeue reads the value of the node after
 * the dummy and swings Head to it with CAS (that node becomes the new dummy).
 *
 * Simplifications: no memory reclamation -- dequeued dummy nodes are never freed (nor
 * reused), so there is no ABA problem and no need for the counted pointers of the
 * original; nodes come from malloc and the queue's dummy is set up by main before the
 * threads start.
 *
 * Compare-and-swap: the paper's machine model treats CAS as an atomic operation on ONE
 * address: under TSO it drains the whole store buffer (x86 locked instruction), under PSO
 * it drains only the buffer of the address it updates. In fencer every `__sync_*` builtin
 * is seq_cst, and a seq_cst (or release) read-modify-write under PSO first drains EVERY
 * buffer (docs/c.md) -- a full barrier that would hide the PSO bug. So CAS here is
 * `__atomic_compare_exchange_n(..., __ATOMIC_RELAXED, __ATOMIC_RELAXED)`, which fencer
 * maps to exactly the paper's atm(p, a, f): TSO drains the thread's buffer, PSO drains
 * only the buffer for the CAS's own location (fencer-memory: Pso::rmw_drain = Chan::Loc).
 *
 * The CAS goes through uintptr_t: a pointer-typed __atomic_compare_exchange_n makes
 * clang -O0 spill the operands into stack temporaries, and fencer numbers every memory
 * object (malloc and address-taken locals alike) in creation order across threads, so
 * each interleaving of those allocations becomes a trace of its own (6,701 executions
 * under SC for a smaller harness, against 24 with the uintptr_t form).
 *
 * Harness: main creates the queue (dummy node); thread i (i = 1, 2) enqueues i and then
 * dequeues once, so the enqueues race on the last node's next pointer and on Tail (with
 * helping) and the dequeues race on Head. Checks (hold under SC): a dequeue never finds
 * the queue empty (each thread's enqueue precedes its dequeue, so at every dequeue more
 * enqueues than dequeues have happened), it returns 1 or 2, the two threads get
 * different values, and after both joins the queue is empty.
 *
 * Expected robustness:
 *   TSO: robust. The only plain stores to shared memory are the initialisation of a new
 *        node (value, next) before the CAS that publishes it; that CAS drains the buffer,
 *        and until then no other thread can reach the node, so a load that overtakes a
 *        buffered store never conflicts with another thread. All other shared writes are
 *        CASes; results stay in registers.
 *   PSO: NOT robust. The stores `node->value = v; node->next = NULL` are to other
 *        addresses than the CAS on `tail->next` that publishes the node, so they can
 *        still be buffered when the other thread follows the new link and reads the
 *        node's fields: it reads a value (and a next pointer) nobody has written yet -- in fencer a
 *        `read of uninitialised memory` (malloc memory), i.e. `fencer check --model pso`
 *        says violation. Under SC the link is written after the fields, so a
 *        dequeuer always sees them. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

struct node {
  int value;
  struct node *next;
};

struct node *Head; /* shared; accessed only through the volatile views below */
struct node *Tail;

#define LOAD(p) (*(struct node *volatile *)&(p))
#define EMPTY 0

/* The paper's CAS: atomic on one address (see the header). */
static int cas(struct node **addr, struct node *expected, struct node *desired) {
  uintptr_t e = (uintptr_t)expected;
  return __atomic_compare_exchange_n((uintptr_t *)addr, &e, (uintptr_t)desired, 0,
                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static void init_queue(void) {
  struct node *dummy = malloc(sizeof *dummy);
  dummy->value = 0;
  dummy->next = NULL;
  Head = dummy;
  Tail = dummy;
}

static void enqueue(int v) {
  struct node *node = malloc(sizeof *node);
  node->value = v;
  node->next = NULL;
  struct node *tail;
  while (1) {
    tail = LOAD(Tail);
    struct node *next = LOAD(tail->next);
    if (tail == LOAD(Tail)) {
      if (next == NULL) {
        if (cas(&tail->next, next, node)) break;
      } else {
        cas(&Tail, tail, next); /* help: swing a lagging Tail */
      }
    }
  }
  cas(&Tail, tail, node);
}

/* Returns the dequeued value, or EMPTY. */
static int dequeue(void) {
  int v;
  while (1) {
    struct node *head = LOAD(Head);
    struct node *tail = LOAD(Tail);
    struct node *next = LOAD(head->next);
    if (head == LOAD(Head)) {
      if (head == tail) {
        if (next == NULL) return EMPTY;
        cas(&Tail, tail, next); /* help: Tail lags behind */
      } else {
        v = *(volatile int *)&next->value;
        if (cas(&Head, head, next)) break;
      }
    }
  }
  /* no free(head): no reclamation, hence no ABA */
  return v;
}

void *worker(void *arg) {
  int mine = (int)(long)arg;
  enqueue(mine);
  int v = dequeue();
  /* this thread's own enqueue precedes its dequeue, and there are as many enqueues as
     dequeues before main's check, so the queue cannot look empty here */
  assert(v == 1 || v == 2);
  return (void *)(long)v;
}

int main(void) {
  init_queue();
  pthread_t t1, t2;
  void *r1, *r2;
  pthread_create(&t1, 0, worker, (void *)1L);
  pthread_create(&t2, 0, worker, (void *)2L);
  pthread_join(t1, &r1);
  pthread_join(t2, &r2);
  /* each value came out exactly once, and nothing is left */
  assert((long)r1 + (long)r2 == 3 && r1 != r2);
  assert(dequeue() == EMPTY);
  return 0;
}
