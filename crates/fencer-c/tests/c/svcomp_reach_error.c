// expect: sc=violation tso=violation pso=violation
/* Under SV-COMP's conventions the call to reach_error is the violation, even when its
 * body is empty. */
#include <pthread.h>
void reach_error(void) {}

int x;

void *t(void *arg) {
  x = 1;
  return 0;
}

int main(void) {
  pthread_t h;
  pthread_create(&h, 0, t, 0);
  if (x == 0)
    reach_error();
  pthread_join(h, 0);
  return 0;
}
