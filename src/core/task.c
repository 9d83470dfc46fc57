/* task.c — shape_task: one background thread, one job at a time (why and
 * the contract: shape/task.h).
 *
 * How: a ring of `depth` slots; start puts a job at the tail (after waiting
 * while every slot is taken), the thread runs the job at the head and frees
 * its slot when the job returns, so `pending` counts the jobs queued or
 * running. The thread sleeps on the condition variable while nothing is
 * pending; the owner sleeps on it while the ring is full (start) or until
 * nothing is pending (wait). Stop is only looked at when nothing is pending,
 * so a started job always runs.
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
    struct slot {
        void (*job)(void *arg);
        void *arg;
    } *ring;
    size_t depth, head, pending;
    int stop;
};

static void *run_jobs(void *p)
{
    shape_task *t = p;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (!t->pending && !t->stop) pthread_cond_wait(&t->changed, &t->mu);
        if (!t->pending) break;
        struct slot s = t->ring[t->head];
        pthread_mutex_unlock(&t->mu);
        s.job(s.arg);
        pthread_mutex_lock(&t->mu);
        t->head = (t->head + 1) % t->depth;
        t->pending--;
        pthread_cond_broadcast(&t->changed);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

int shape_task_new(shape_task **out, shape_err *err) { return shape_task_new_queue(out, 1, err); }

int shape_task_new_queue(shape_task **out, size_t depth, shape_err *err)
{
    *out = NULL;
    if (depth == 0) return shape_err_set(err, SHAPE_EINVAL, "a task queue holds at least one job");
    shape_task *t = calloc(1, sizeof *t);
    if (t) t->ring = calloc(depth, sizeof *t->ring);
    if (!t || !t->ring) {
        free(t);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory starting a thread");
    }
    t->depth = depth;
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
    free(t->ring);
    free(t);
    return shape_err_set(err, SHAPE_EIO, "cannot start a thread: %s", strerror(rc));
}

static void wait_locked(shape_task *t)
{
    while (t->pending) pthread_cond_wait(&t->changed, &t->mu);
}

void shape_task_start(shape_task *t, void (*job)(void *arg), void *arg)
{
    pthread_mutex_lock(&t->mu);
    while (t->pending == t->depth) pthread_cond_wait(&t->changed, &t->mu);
    t->ring[(t->head + t->pending) % t->depth] = (struct slot){job, arg};
    t->pending++;
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
    free(t->ring);
    free(t);
}
