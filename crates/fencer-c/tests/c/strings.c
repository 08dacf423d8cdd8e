// expect: sc=safe tso=safe pso=safe
/* String and memory functions, and memcpy/memset/memmove with lengths known only at run
 * time (wide scalars are copied whole). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct pair {
  long a;
  int b;
};

int n = 2;

int main(void) {
  char buf[16];
  strcpy(buf, "lock");
  assert(strlen(buf) == 4);
  strcat(buf, "free");
  assert(strcmp(buf, "lockfree") == 0 && strcmp(buf, "lock") > 0);
  assert(strncmp(buf, "lockstep", 4) == 0 && strncmp(buf, "lockstep", 5) != 0);
  assert(strchr(buf, 'f') == buf + 4 && strchr(buf, 'z') == 0);
  char small[4];
  strncpy(small, "abcdef", 3);
  small[3] = 0;
  assert(strcmp(small, "abc") == 0);
  assert(memcmp("abc", "abd", 2) == 0 && memcmp("abc", "abd", 3) < 0);
  assert(abs(-3) == 3 && labs(4) == 4);

  struct pair src[2] = {{1L << 40, -5}, {3, 4}}, dst[2];
  memcpy(dst, src, n * sizeof(struct pair));
  assert(dst[0].a == 1L << 40 && dst[0].b == -5 && dst[1].b == 4);
  int arr[4] = {1, 2, 3, 4};
  memmove(arr + 1, arr, (n + 1) * sizeof(int));
  assert(arr[0] == 1 && arr[1] == 1 && arr[2] == 2 && arr[3] == 3);
  memmove(arr, arr + 1, (n + 1) * sizeof(int));
  assert(arr[0] == 1 && arr[1] == 2 && arr[2] == 3);
  memset(arr, 0, n * sizeof(int));
  assert(arr[0] == 0 && arr[1] == 0 && arr[2] == 3);
  char *p = malloc(n + 1);
  memset(p, 'x', n);
  p[n] = 0;
  assert(strcmp(p, "xx") == 0);
  free(p);
  return 0;
}
