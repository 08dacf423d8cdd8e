// Two threads hand a turn back and forth for ever, the shape of GenMC's `pgsql` test: each
// waits until its latch is up, takes it down, and if the turn is its own, does its work
// and passes the turn on. No execution ends, so DPOR cannot finish any of them; with no
// option, fencer's default engine sees its threads run past every bound it tries and
// hands the program to abpress, which proves it without a bound.
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

atomic_bool latch1 = true, latch2 = false;
atomic_bool turn1 = true, turn2 = false;
atomic_int working;

void *first(void *arg)
{
	for (;;) {
		while (!atomic_load(&latch1))
			;
		atomic_store(&latch1, false);
		if (atomic_load(&turn1)) {
			atomic_store(&working, 1);
			assert(atomic_load(&working) == 1);
			atomic_store(&turn1, false);
			atomic_store(&turn2, true);
			atomic_store(&latch2, true);
		}
	}
	return NULL;
}

void *second(void *arg)
{
	for (;;) {
		while (!atomic_load(&latch2))
			;
		atomic_store(&latch2, false);
		if (atomic_load(&turn2)) {
			atomic_store(&working, 2);
			assert(atomic_load(&working) == 2);
			atomic_store(&turn2, false);
			atomic_store(&turn1, true);
			atomic_store(&latch1, true);
		}
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, first, NULL);
	pthread_create(&b, NULL, second, NULL);
	pthread_join(a, NULL);
	return 0;
}
