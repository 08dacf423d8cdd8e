/* fencer's genmc.h, for programs written for GenMC (its test suite, harnesses written for
 * it). fencer puts it after every include directory: a genmc.h of your own wins.
 *
 * GenMC's hints (spin loops, annotations for its own reductions) change what GenMC
 * explores, not what the program does, so here they are plain C; fencer finds spin loops
 * by itself. What differs from GenMC:
 *  - __VERIFIER_optional(x) runs nothing. GenMC runs x in a branch that then blocks, so
 *    no complete execution contains it; only a failure inside x itself would differ.
 *  - A hazard pointer's retire never frees: a use after retire is not reported.
 *  - __VERIFIER_nondet_int is refused by the DPOR engine, as every input is (see
 *    `--engine abpress`). */
#ifndef __FENCER_GENMC_H__
#define __FENCER_GENMC_H__
#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>

void __VERIFIER_assume(bool);
int __VERIFIER_nondet_int(void);

typedef pthread_t __VERIFIER_thread_t;
static inline __VERIFIER_thread_t __VERIFIER_spawn(void *(*f)(void *), void *arg)
{
	pthread_t t;
	pthread_create(&t, NULL, f, arg);
	return t;
}
static inline __VERIFIER_thread_t __VERIFIER_spawn_symmetric(void *(*f)(void *), void *arg,
							      __VERIFIER_thread_t th)
{
	(void)th;
	return __VERIFIER_spawn(f, arg);
}
static inline void *__VERIFIER_join(__VERIFIER_thread_t th)
{
	void *r;
	pthread_join(th, &r);
	return r;
}
static inline void __VERIFIER_join_symmetric(__VERIFIER_thread_t th) { __VERIFIER_join(th); }

static inline void __VERIFIER_loop_begin(void) {}
static inline void __VERIFIER_spin_start(void) {}
static inline void __VERIFIER_spin_end(bool b) { (void)b; }

#define __VERIFIER_local_write(s) do { s; } while (0)
#define __VERIFIER_final_write(s) do { s; } while (0)
#define __VERIFIER_helped_CAS(c) do { c; } while (0)
#define __VERIFIER_helping_CAS(c) do { c; } while (0)
#define __VERIFIER_speculative_read(c) (c)
#define __VERIFIER_confirming_read(c) (c)
#define __VERIFIER_confirming_CAS(c) (c)
#define __VERIFIER_final_CAS(c) (c)
/* GenMC runs x in a branch that then blocks: no complete execution runs it. */
#define __VERIFIER_optional(x) do { } while (0)

typedef int __VERIFIER_hp_t;
#define __VERIFIER_hp_alloc() ((__VERIFIER_hp_t *)0)
#define __VERIFIER_hp_protect(hp, p) __atomic_load_n((void **)(p), __ATOMIC_ACQUIRE)
#define __VERIFIER_hp_clear(hp) do { } while (0)
#define __VERIFIER_hp_free(hp) do { } while (0)
#define __VERIFIER_hp_retire(p) do { } while (0)

static inline void __VERIFIER_method_begin(const char *name, int arg) { (void)name; (void)arg; }
static inline void __VERIFIER_method_end(const char *name, int ret) { (void)name; (void)ret; }
#endif
