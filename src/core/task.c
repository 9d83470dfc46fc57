/* task.c — shape_task: one background thread, one job at a time (why and
 * the contract: shape/task.h).
 *
 * How: `job` is the slot: set by start (after the previous job cleared it),
 * cleared by the thread when the job returns. The thread sleeps on the
 * condition variable while the slot is empty; the owner sleeps on it while
 * the slot is full. Stop is only looked at when the slot is empty, so a
 * started job always runs.
 */
#include "shape/task.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

struct shape_task {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t changed;
    void (*job)(void *arg);
    void *arg;
    int stop;
};

static void *run_jobs(void *p)
{
    shape_task *t = p;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (!t->job && !t->stop) pthread_cond_wait(&t->changed, &t->mu);
        if (!t->job) break;
        void (*job)(void *) = t->job;
        void *arg = t->arg;
        pthread_mutex_unlock(&t->mu);
        job(arg);
        pthread_mutex_lock(&t->mu);
        t->job = NULL;
        pthread_cond_broadcast(&t->changed);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

int shape_task_new(shape_task **out, shape_err *err)
{
    *out = NULL;
    shape_task *t = calloc(1, sizeof *t);
    if (!t) return shape_err_set(err, SHAPE_ENOMEM, "out of memory starting a thread");
    int rc = pthread_mutex_init(&t->mu, NULL);
    if (rc == 0) {
        rc = pthread_cond_init(&t->changed, NULL);
        if (rc == 0) {
            /* The worker never takes SIGINT/SIGTERM: they go to the thread
             * that reads, whose blocking read(2) then returns EINTR and sees
             * the stop request at once. */
            sigset_t stop, old;
            sigemptyset(&stop);
            sigaddset(&stop, SIGINT);
            sigaddset(&stop, SIGTERM);
            pthread_sigmask(SIG_BLOCK, &stop, &old);
            rc = pthread_create(&t->thread, NULL, run_jobs, t);
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            if (rc == 0) {
                *out = t;
                return SHAPE_OK;
            }
            pthread_cond_destroy(&t->changed);
        }
        pthread_mutex_destroy(&t->mu);
    }
    free(t);
    return shape_err_set(err, SHAPE_EIO, "cannot start a thread: %s", strerror(rc));
}

static void wait_locked(shape_task *t)
{
    while (t->job) pthread_cond_wait(&t->changed, &t->mu);
}

void shape_task_start(shape_task *t, void (*job)(void *arg), void *arg)
{
    pthread_mutex_lock(&t->mu);
    wait_locked(t);
    t->job = job;
    t->arg = arg;
    pthread_cond_broadcast(&t->changed);
    pthread_mutex_unlock(&t->mu);
}

void shape_task_wait(shape_task *t)
{
    pthread_mutex_lock(&t->mu);
    wait_locked(t);
    pthread_mutex_unlock(&t->mu);
}

void shape_task_free(shape_task *t)
{
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    wait_locked(t);
    t->stop = 1;
    pthread_cond_broadcast(&t->changed);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->changed);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
