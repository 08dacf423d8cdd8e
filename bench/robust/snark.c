// expect: sc=safe tso=safe pso=violation
// robust: tso=yes pso=no
/* snark.c -- the "Snark" DCAS-based linked-list deque (Detlefs, Flood, Garthwaite,
 * Martin, Shavit and Steele, "Even Better DCAS-Based Concurrent Deques", DISC 2000).
 *
 * Origin: the "snark" benchmark of Burnim, Sen and Stergiou (TACAS'11, section 7,
 * Tables 1 and 2; 150 LOC there), taken from CheckFence (Burckhardt, Alur and Martin,
 * PLDI'07). A doubly linked list of nodes {L, R, V}; LeftHat and RightHat point to the
 * end nodes; a shared Dummy node (L = R = Dummy) ends the list on both sides. A pushed
 * node points at Dummy on its outer side. An empty end is recognised by a hat whose
 * outer pointer is a self-loop: a popped node is turned into one (popRight sets
 * rh->L = rh in the same DCAS that moves RightHat left), and Dummy is one. Pushes swing
 * the hat and the old end's outer pointer with one DCAS (both hats when the deque is
 * empty); pops of the last node swing both hats to Dummy with one DCAS.
 * Note: Doherty et al. (SPAA 2004, "DCAS is not a silver bullet for nonblocking
 * algorithm design") found that the original can pop an element twice or report a
 * non-empty deque empty. With each hat/pointer read taken separately (the original's
 * reads), fencer finds the second bug under SC with this very harness: A's popLeft reads
 * LeftHat = RightHat = n1 (deque [n1]); B pushes n2 on the left and pops n1 on the
 * right (setting n1->L = n1); A then reads n1->L == n1 and returns "empty" although
 * the deque held an element throughout. To keep the benchmark correct under SC, each
 * operation reads the words it decides on (hats and the end node's L and R) in ONE
 * snapshot under the DCAS lock; the DCAS then validates that snapshot as before.
 *
 * DCAS emulation: a global spinlock word `dcas_lock` (acquire a loop of
 * `__atomic_compare_exchange_n(l, &free, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)`,
 * release `__atomic_exchange_n(l, 0, __ATOMIC_RELAXED)`). Inside it, DCAS compares both words and writes them with relaxed
 * `__atomic_exchange_n`, so they reach memory at once, as an atomic operation on two
 * addresses would. Because a lock-based DCAS makes its two writes in two steps, the
 * reads of hats and of L/R pointers (the snapshot above) and popRight/popLeft's clearing
 * store of the popped node's outer pointer (`wr`) also go through the lock; otherwise a
 * plain reader could see one of a DCAS's two writes without the other, which a real DCAS
 * never shows. The node's value V, written once before the node is published, is read
 * plainly.
 * fencer maps these read-modify-writes weaker than release to the paper's atm(p, a, f):
 * under TSO they drain the thread's whole buffer, under PSO only the channel of their own
 * address. (A pthread mutex or a `__sync_*` builtin would drain every buffer under PSO,
 * a full barrier that hides the PSO bug; see docs/c.md.)
 *
 * Simplifications: popped nodes are not freed (no reclamation, as in the GC setting the
 * algorithm assumes); Dummy and the hats are set up by main before the threads start.
 *
 * (The acquire is a CAS loop, not a test-and-set exchange loop: a failed CAS only reads,
 * so fencer's spin-loop pruning drops it, while each failed exchange writes the lock
 * word and multiplies the traces -- 223,582 SC executions against 252 for two threads
 * taking a lock 5 times each.)
 *
 * Harness: thread A: pushRight(1), then popLeft(). Thread B: pushLeft(2), then
 * popRight(). Checks (hold under SC): no pop finds the deque empty (each thread's push
 * precedes its pop, so at every pop there are more pushes than earlier pops), the two
 * pops return 1 and 2 in some order, and after both joins the deque is empty at both
 * ends.
 *
 * Expected robustness:
 *   TSO: robust. The only plain stores to shared memory initialise a new node (L, R, V)
 *        before the DCAS that publishes it, and the node is unreachable until then; the
 *        DCAS's lock acquire drains the buffer (and every snapshot's does too). Everything else
 *        is a read-modify-write.
 *   PSO: NOT robust. The node's initialising stores (`nd->R = Dummy; nd->V = v;
 *        nd->L = ...`) are to other addresses than the lock word and the two words the
 *        DCAS writes, so they can still be buffered after the DCAS links the node; the
 *        other thread then pops it and reads its L, R or V before they are written -- a
 *        `read of uninitialised memory` (malloc memory) in fencer, so
 *        `fencer check --model pso` says violation. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

struct node {
  struct node *L, *R;
  int V;
};

struct node *Dummy;
struct node *LeftHat, *RightHat;
int dcas_lock = 0;

#define EMPTY 0
/* Retry bound that SC executions never reach (a DCAS fails only after the other thread
   changed the deque, which it does at most twice): cuts weak executions that loop. */
#define MAX_TRIES 8

/* A relaxed exchange of a pointer word, through uintptr_t: a pointer-typed one makes
   clang -O0 spill its operands into stack temporaries, and fencer numbers memory objects
   in creation order across threads, so each interleaving of those allocations would be
   a trace of its own. */
#define XCHG(p, v) __atomic_exchange_n((uintptr_t *)(p), (uintptr_t)(v), __ATOMIC_RELAXED)

static void glock(void) {
  while (1) {
    int free_ = 0;
    if (__atomic_compare_exchange_n(&dcas_lock, &free_, 1, 0, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED))
      break;
  }
}
static void gunlock(void) { __atomic_exchange_n(&dcas_lock, 0, __ATOMIC_RELAXED); }

/* A write of a word DCAS may change, atomic with respect to DCAS. */
static void wr(struct node **p, struct node *v) {
  glock();
  XCHG(p, v);
  gunlock();
}

#define RD(x) (*(struct node *volatile *)&(x))

static int dcas(struct node **a1, struct node **a2, struct node *o1, struct node *o2,
                struct node *n1, struct node *n2) {
  glock();
  int ok = *(struct node *volatile *)a1 == o1 && *(struct node *volatile *)a2 == o2;
  if (ok) {
    XCHG(a1, n1);
    XCHG(a2, n2);
  }
  gunlock();
  return ok;
}

static void pushRight(int v) {
  struct node *nd = malloc(sizeof *nd);
  nd->R = Dummy;
  nd->V = v;
  int tries = 0;
  while (1) {
    assert(++tries <= MAX_TRIES);
    glock(); /* snapshot */
    struct node *rh = RD(RightHat), *rhR = RD(rh->R), *lh = RD(LeftHat);
    gunlock();
    if (rhR == rh) { /* empty */
      nd->L = Dummy;
      if (dcas(&RightHat, &LeftHat, rh, lh, nd, nd)) return;
    } else {
      nd->L = rh;
      if (dcas(&RightHat, &rh->R, rh, rhR, nd, nd)) return;
    }
  }
}

static void pushLeft(int v) {
  struct node *nd = malloc(sizeof *nd);
  nd->L = Dummy;
  nd->V = v;
  int tries = 0;
  while (1) {
    assert(++tries <= MAX_TRIES);
    glock(); /* snapshot */
    struct node *lh = RD(LeftHat), *lhL = RD(lh->L), *rh = RD(RightHat);
    gunlock();
    if (lhL == lh) { /* empty */
      nd->R = Dummy;
      if (dcas(&LeftHat, &RightHat, lh, rh, nd, nd)) return;
    } else {
      nd->R = lh;
      if (dcas(&LeftHat, &lh->L, lh, lhL, nd, nd)) return;
    }
  }
}

static int popRight(void) {
  int tries = 0;
  while (1) {
    assert(++tries <= MAX_TRIES);
    glock(); /* snapshot */
    struct node *rh = RD(RightHat), *lh = RD(LeftHat), *rhR = RD(rh->R), *rhL = RD(rh->L);
    gunlock();
    if (rhR == rh) return EMPTY;
    if (rh == lh) { /* one element */
      if (dcas(&RightHat, &LeftHat, rh, lh, Dummy, Dummy))
        return ((volatile struct node *)rh)->V;
    } else {
      if (dcas(&RightHat, &rh->L, rh, rhL, rhL, rh)) {
        int result = ((volatile struct node *)rh)->V;
        wr(&rh->R, Dummy);
        return result;
      }
    }
  }
}

static int popLeft(void) {
  int tries = 0;
  while (1) {
    assert(++tries <= MAX_TRIES);
    glock(); /* snapshot */
    struct node *lh = RD(LeftHat), *rh = RD(RightHat), *lhL = RD(lh->L), *lhR = RD(lh->R);
    gunlock();
    if (lhL == lh) return EMPTY;
    if (lh == rh) { /* one element */
      if (dcas(&LeftHat, &RightHat, lh, rh, Dummy, Dummy))
        return ((volatile struct node *)lh)->V;
    } else {
      if (dcas(&LeftHat, &lh->R, lh, lhR, lhR, lh)) {
        int result = ((volatile struct node *)lh)->V;
        wr(&lh->L, Dummy);
        return result;
      }
    }
  }
}

void *thread_a(void *arg) {
  pushRight(1);
  int v = popLeft();
  assert(v == 1 || v == 2); /* never empty: see the header */
  return (void *)(long)v;
}

void *thread_b(void *arg) {
  pushLeft(2);
  int v = popRight();
  assert(v == 1 || v == 2);
  return (void *)(long)v;
}

int main(void) {
  Dummy = malloc(sizeof *Dummy);
  Dummy->L = Dummy;
  Dummy->R = Dummy;
  Dummy->V = EMPTY;
  LeftHat = Dummy;
  RightHat = Dummy;
  pthread_t a, b;
  void *ra, *rb;
  pthread_create(&a, 0, thread_a, 0);
  pthread_create(&b, 0, thread_b, 0);
  pthread_join(a, &ra);
  pthread_join(b, &rb);
  assert((long)ra + (long)rb == 3 && ra != rb);
  assert(popLeft() == EMPTY);
  assert(popRight() == EMPTY);
  return 0;
}
