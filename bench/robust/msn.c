// expect: sc=safe tso=safe pso=violation
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
 * Harness: main creates the queue (dummy node), then thread A enqueues 1 and 2, thread B
 * dequeues twice. After both joins main dequeues what is left. Checks (all hold under SC
 * by linearizability of a FIFO queue with one producer): every value dequeued is 1 or 2,
 * B sees 1 before 2, nothing is lost or duplicated (B's and main's values together are
 * exactly 1 then 2 in order), and the queue is empty at the end.
 *
 * Expected robustness:
 *   TSO: robust. The only plain stores to shared memory are the initialisation of a new
 *        node (value, next) before the CAS that publishes it; that CAS drains the buffer,
 *        and until then no other thread can reach the node, so a load that overtakes a
 *        buffered store never conflicts with another thread. All other shared writes are
 *        CASes. (B never writes plain shared memory; results stay in registers.)
 *   PSO: NOT robust. The stores `node->value = v; node->next = NULL` are to other
 *        addresses than the CAS on `tail->next` that publishes the node, so they can
 *        still be buffered when B follows the new link and reads the node's fields:
 *        B reads a value (and a next pointer) nobody has written yet -- in fencer a
 *        `read of uninitialised memory` (malloc memory), i.e. `fencer check --model pso`
 *        says violation. Under SC the link is written after the fields, so B always
 *        sees them. */
#include <assert.h>
#include <pthread.h>
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
  return __atomic_compare_exchange_n(addr, &expected, desired, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED);
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

void *producer(void *arg) {
  enqueue(1);
  enqueue(2);
  return 0;
}

void *consumer(void *arg) {
  int a = dequeue();
  int b = dequeue();
  assert(a == EMPTY || a == 1 || a == 2);
  assert(b == EMPTY || b == 1 || b == 2);
  /* FIFO with one producer: 2 is never seen before 1 */
  assert(a != 2);
  assert(!(a == EMPTY && b == 2));
  return (void *)(long)(a * 10 + b);
}

int main(void) {
  init_queue();
  pthread_t p, c;
  void *res;
  pthread_create(&p, 0, producer, 0);
  pthread_create(&c, 0, consumer, 0);
  pthread_join(p, 0);
  pthread_join(c, &res);
  int ab = (int)(long)res;
  int a = ab / 10, b = ab % 10;
  /* what the consumer got, then what is left, is exactly 1, 2 */
  int seq[4], n = 0;
  if (a != EMPTY) seq[n++] = a;
  if (b != EMPTY) seq[n++] = b;
  int x;
  while (n < 4 && (x = dequeue()) != EMPTY) seq[n++] = x;
  assert(n == 2);
  assert(seq[0] == 1 && seq[1] == 2);
  assert(dequeue() == EMPTY);
  return 0;
}
