// expect: sc=safe tso=safe pso=safe
/* main runs as a program started with no arguments. */
#include <assert.h>
#include <string.h>

int main(int argc, char **argv) {
  assert(argc == 1);
  assert(argv[0] != 0 && argv[1] == 0);
  assert(strlen(argv[0]) > 0 && strcmp(argv[0], "argv") == 0);
  return 0;
}
