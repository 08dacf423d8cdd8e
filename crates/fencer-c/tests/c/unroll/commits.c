// GenMC's tests/correct/synthetic/commits (N=2): each thread stamps x and commits when it
// reads its own stamp back. `i` changes on some iterations and not on others, so the
// spin-loop rewrite guards the loop: it ends in two back edges, one loop for --unroll.
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define N 2

atomic_int n = ATOMIC_VAR_INIT(N);
atomic_int x;
int idx[2];

void *thread_n(void *arg)
{
	int i, j = *((int *) arg);

	i = 0;
	while (i < atomic_load_explicit(&n, memory_order_acquire)) {
		atomic_store_explicit(&x, j, memory_order_release);
		if (atomic_load_explicit(&x, memory_order_acquire) == j)
			++i;
	}
	return NULL;
}

int main()
{
	pthread_t t[2];

	for (int i = 0; i < 2; i++) {
		idx[i] = i + 1;
		if (pthread_create(&t[i], NULL, thread_n, &idx[i]))
			abort();
	}
	return 0;
}
