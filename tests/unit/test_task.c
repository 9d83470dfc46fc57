/* test_task.c — shape_task: jobs run on another thread, one at a time, in
 * the order started; start waits for the job before (a queue of depth d:
 * while d jobs are queued or running, and not before); wait and free return
 * only after the last job finished, and what it wrote is visible then. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <time.h>

#include <cmocka.h>

#include "shape/task.h"

typedef struct log {
    int order[64];
    int n;
    int running; /* jobs running now: never above 1 */
    int overlap;
    pthread_t caller;
    int on_caller;
} log_t;

typedef struct job {
    log_t *log;
    int id;
} job_t;

static void record(void *arg)
{
    job_t *j = arg;
    log_t *l = j->log;
    if (l->running++) l->overlap = 1;
    if (pthread_equal(pthread_self(), l->caller)) l->on_caller = 1;
    struct timespec pause = {0, 2000000}; /* 2 ms: the caller gets ahead if start does not wait */
    nanosleep(&pause, NULL);
    l->order[l->n++] = j->id;
    l->running--;
}

static void test_jobs_in_order_one_at_a_time(void **state)
{
    (void)state;
    shape_task *t = NULL;
    shape_err err;
    assert_int_equal(shape_task_new(&t, &err), SHAPE_OK);
    log_t l = {.caller = pthread_self()};
    job_t jobs[20];
    for (int i = 0; i < 20; i++) {
        jobs[i] = (job_t){&l, i};
        shape_task_start(t, record, &jobs[i]);
    }
    shape_task_wait(t);
    assert_int_equal(l.n, 20);
    for (int i = 0; i < 20; i++) assert_int_equal(l.order[i], i);
    assert_false(l.overlap);
    assert_false(l.on_caller);
    jobs[0].id = 99;
    shape_task_start(t, record, &jobs[0]);
    shape_task_free(t); /* runs the job started last before stopping */
    assert_int_equal(l.n, 21);
    assert_int_equal(l.order[20], 99);
    shape_task_free(NULL);
}

/* A job that holds the task until the caller opens the gate. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t opened;
    int open;
    job_t job;
} gate_t;

static void wait_for_gate(void *arg)
{
    gate_t *g = arg;
    pthread_mutex_lock(&g->mu);
    while (!g->open) pthread_cond_wait(&g->opened, &g->mu);
    pthread_mutex_unlock(&g->mu);
    record(&g->job);
}

static void test_queue_runs_ahead_of_the_caller(void **state)
{
    (void)state;
    shape_task *t = NULL;
    shape_err err;
    assert_int_equal(shape_task_new_queue(&t, 0, &err), SHAPE_EINVAL);
    assert_null(t);
    assert_int_equal(shape_task_new_queue(&t, 4, &err), SHAPE_OK);
    log_t l = {.caller = pthread_self()};
    gate_t g = {.mu = PTHREAD_MUTEX_INITIALIZER, .opened = PTHREAD_COND_INITIALIZER, .job = {&l, 0}};
    job_t jobs[40];
    /* the gate holds the thread: three more starts must return at once (a
     * start that waited for the job before would hang here) */
    shape_task_start(t, wait_for_gate, &g);
    for (int i = 1; i < 4; i++) {
        jobs[i] = (job_t){&l, i};
        shape_task_start(t, record, &jobs[i]);
    }
    assert_int_equal(l.n, 0);
    pthread_mutex_lock(&g.mu);
    g.open = 1;
    pthread_cond_broadcast(&g.opened);
    pthread_mutex_unlock(&g.mu);
    /* a full queue: each start waits for a slot, so once start has
     * returned for job i, job i - 4 has finished and its record is seen */
    for (int i = 4; i < 40; i++) {
        jobs[i] = (job_t){&l, i};
        shape_task_start(t, record, &jobs[i]);
        assert_true(l.n >= i - 3);
    }
    shape_task_wait(t);
    assert_int_equal(l.n, 40);
    for (int i = 0; i < 40; i++) assert_int_equal(l.order[i], i);
    assert_false(l.overlap);
    assert_false(l.on_caller);
    shape_task_free(t);
}

static void test_wait_without_job(void **state)
{
    (void)state;
    shape_task *t = NULL;
    shape_err err;
    assert_int_equal(shape_task_new(&t, &err), SHAPE_OK);
    shape_task_wait(t);
    shape_task_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobs_in_order_one_at_a_time),
        cmocka_unit_test(test_queue_runs_ahead_of_the_caller),
        cmocka_unit_test(test_wait_without_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
