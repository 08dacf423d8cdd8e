// expect: sc=safe tso=safe pso=violation
// robust: tso=yes pso=no
/* ms2.c -- the Michael-Scott two-lock queue (Michael and Scott, PODC'96: "Simple, fast,
 * and practical non-blocking and blocking concurrent queue algorithms", figure 2).
 *
 * Origin: the "ms2" benchmark of Burnim, Sen and Stergiou (TACAS'11, section 7, Tables 1
 * and 2; 80 LOC there), taken from CheckFence (Burckhardt, Alur and Martin, PLDI'07).
 * A singly linked list with a dummy node; enqueuers serialise on a tail lock and link the
 * new node after Tail, dequeuers serialise on a head lock and advance Head to the node
 * after the dummy (which becomes the new dummy). An enqueuer and a dequeuer run
 * concurrently and race on the `next` field of the last node.
 *
 * Simplifications: dequeued dummies are not freed (the original frees them; leaving them
 * keeps the harness small and the PSO bug an initialisation bug, not a use-after-free);
 * the queue's dummy is set up by main before the threads start.
 *
 * Locks: the paper's machine model treats lock and unlock as atomic operations on the
 * lock's own address: under TSO they drain the thread's whole store buffer (x86 locked
 * instructions), under PSO only the buffer of the lock word. fencer's pthread_mutex_lock/
 * unlock drain EVERY buffer under PSO (docs/c.md), a full barrier that makes this queue
 * robust under PSO too (check with -DPTHREAD_LOCKS: then all three models say safe).
 * So by default the locks are spinlocks whose acquire is a loop of
 * `__atomic_compare_exchange_n(l, &free, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)` and
 * whose release is
 * `__atomic_exchange_n(l, 0, __ATOMIC_RELAXED)`: read-modify-writes weaker than release,
 * which fencer maps to exactly the paper's atm(p, l, f) -- TSO drains the buffer, PSO
 * drains only the channel of `l`.
 *
 * (The acquire is a CAS loop, not a test-and-set exchange loop: a failed CAS only reads,
 * so fencer's spin-loop pruning drops it, while each failed exchange writes the lock
 * word and multiplies the traces -- 223,582 SC executions against 252 for two threads
 * taking a lock 5 times each.)
 *
 * Harness: two threads; thread i (i = 1, 2) enqueues i and then dequeues once, so both
 * locks are contended and enqueues race with dequeues. Checks (hold under SC): a dequeue
 * never finds the queue empty (each thread's enqueue precedes its dequeue), it returns 1
 * or 2, the two threads get different values, and after both joins the queue is empty.
 *
 * Expected robustness:
 *   TSO: robust. Plain stores to shared memory are the new node's initialisation (before
 *        the tail lock's acquire, which drains the buffer; the node is unreachable until
 *        then) and the stores inside a critical section, which are the last accesses
 *        before the unlocking read-modify-write drains the buffer: no load ever overtakes
 *        a buffered store to shared memory that another thread can access.
 *   PSO: NOT robust. `node->value = v; node->next = NULL` (enqueue, before locking) can
 *        still be buffered after `Tail->next = node` reaches memory: neither the acquire
 *        nor the release of the tail lock drains them. The other thread, which takes only the head
 *        lock in dequeue, follows Head->next to the new node and reads its value and next pointer before
 *        they are written -- a `read of uninitialised memory` (malloc memory) in fencer,
 *        so `fencer check --model pso` says violation. Also `Tail = node` and
 *        `Tail->next = node` may reach memory in either order. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

struct node {
  int value;
  struct node *next;
};

#ifdef PTHREAD_LOCKS
typedef pthread_mutex_t lock_t;
#define LOCK_INIT PTHREAD_MUTEX_INITIALIZER
static void lock(lock_t *l) { pthread_mutex_lock(l); }
static void unlock(lock_t *l) { pthread_mutex_unlock(l); }
#else
typedef int lock_t;
#define LOCK_INIT 0
static void lock(lock_t *l) {
  while (1) {
    int free_ = 0;
    if (__atomic_compare_exchange_n(l, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      break;
  }
}
static void unlock(lock_t *l) { __atomic_exchange_n(l, 0, __ATOMIC_RELAXED); }
#endif

struct node *volatile Head;
struct node *volatile Tail;
lock_t H_lock = LOCK_INIT;
lock_t T_lock = LOCK_INIT;

#define EMPTY 0

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
  lock(&T_lock);
  ((volatile struct node *)Tail)->next = node;
  Tail = node;
  unlock(&T_lock);
}

/* Returns the dequeued value, or EMPTY. */
static int dequeue(void) {
  lock(&H_lock);
  struct node *node = Head;
  struct node *new_head = ((volatile struct node *)node)->next;
  if (new_head == NULL) {
    unlock(&H_lock);
    return EMPTY;
  }
  int v = ((volatile struct node *)new_head)->value;
  Head = new_head;
  unlock(&H_lock);
  /* the original frees `node` here; not reclaimed in this benchmark */
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
