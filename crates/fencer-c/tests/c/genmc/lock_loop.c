/* A checker that waits for two workers by taking the mutex, looking at their results
 * and giving the mutex back (GenMC's lock zero-net-effect loop). With -DPROBE there are
 * no workers; the checker waits for `go` instead (read before it takes the mutex), which
 * main sets only after a probe tried the mutex once: the probe finds the mutex held
 * only during a failed iteration, so such iterations cannot be dropped then. */
#include <assert.h>
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
#ifdef PROBE
int done[2] = {1, 1};
int go;
#else
int done[2];
int go = 1;
#endif
int busy;

static int all_done(void)
{
	return done[0] && done[1];
}

void *checker(void *arg)
{
	while (1) {
		int g = go;
		pthread_mutex_lock(&m);
		if (g && all_done()) {
			pthread_mutex_unlock(&m);
			break;
		}
		pthread_mutex_unlock(&m);
	}
	return 0;
}

void *worker(void *arg)
{
	pthread_mutex_lock(&m);
	done[(long)arg] = 1;
	pthread_mutex_unlock(&m);
	return 0;
}

#ifdef PROBE
void *probe(void *arg)
{
	if (pthread_mutex_trylock(&m) == 0)
		pthread_mutex_unlock(&m);
	else
		busy = 1;
	return 0;
}
#endif

int main(void)
{
	pthread_t c;
	pthread_create(&c, 0, checker, 0);
#ifdef PROBE
	pthread_t p;
	pthread_create(&p, 0, probe, 0);
	pthread_join(p, 0);
	go = 1;
#else
	pthread_t w[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&w[i], 0, worker, (void *)i);
#endif
	pthread_join(c, 0);
	assert(!busy);
	return 0;
}
