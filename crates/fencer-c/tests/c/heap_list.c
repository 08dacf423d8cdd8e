// expect: sc=safe tso=safe pso=safe
/* Heap memory, structs and pointers: a thread builds a list under a mutex; main walks it
 * after the join, then frees it. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

struct node { short key; struct node *next; };
struct node *head;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *builder(void *arg) {
  for (int i = 0; i < 3; i++) {
    struct node *n = malloc(sizeof *n);
    n->key = (short)(i * 1000);
    pthread_mutex_lock(&m);
    n->next = head;
    head = n;
    pthread_mutex_unlock(&m);
  }
  return 0;
}

int main(void) {
  pthread_t a;
  int *zeros = calloc(4, sizeof(int));
  pthread_create(&a, 0, builder, 0);
  pthread_join(a, 0);
  int sum = 0, len = 0;
  for (struct node *p = head; p; p = p->next) { sum += p->key; len++; }
  assert(len == 3 && sum == 3000);
  assert(zeros[3] == 0);
  while (head) { struct node *n = head->next; free(head); head = n; }
  free(zeros);
  return 0;
}
