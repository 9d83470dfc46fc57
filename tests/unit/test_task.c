/* test_task.c — shape_task: jobs run on another thread, one at a time, in
 * the order started; start waits for the job before; wait and free return
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
        cmocka_unit_test(test_wait_without_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
