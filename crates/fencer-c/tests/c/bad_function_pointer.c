// expect: sc=violation tso=violation pso=violation
/* Calling through a pointer that is no function's address is a memory error. */
int x;

int main(void) {
  int (*f)(void) = (int (*)(void))&x;
  return f();
}
