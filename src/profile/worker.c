/* worker.c — shape_profile_worker: shape_profile_update on a thread of its
 * own, one batch behind the reader (why and the contract: shape/profile_worker.h).
 *
 * How: a mutex guards one slot (the batch handed over, not yet taken), a
 * `busy` flag (a batch taken and being profiled), the sticky first failure
 * and a stop flag; one condition variable carries every change. submit waits
 * while the slot is full or the worker busy, so the caller never runs more
 * than one batch ahead; drain waits for both to clear. The worker takes the
 * batch out of the slot, profiles it without the lock, releases it, and
 * records a failure under the lock.
 */
#include "shape/profile_worker.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct shape_profile_worker {
    shape_profile *profile;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t changed;
    struct ArrowSchema schema; /* the slot: full when array.release != NULL */
    struct ArrowArray array;
    int busy, stop;
    int failed;
    shape_err failure;
};

static void release_batch(struct ArrowSchema *schema, struct ArrowArray *array)
{
    if (array->release) array->release(array);
    if (schema->release) schema->release(schema);
}

static void *work(void *arg)
{
    shape_profile_worker *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->array.release && !w->stop) pthread_cond_wait(&w->changed, &w->mu);
        if (!w->array.release) break; /* stopped with nothing left */
        struct ArrowSchema schema = w->schema;
        struct ArrowArray array = w->array;
        w->schema.release = NULL;
        w->array.release = NULL;
        w->busy = 1;
        int skip = w->failed;
        pthread_mutex_unlock(&w->mu);

        shape_err err;
        shape_err_clear(&err);
        int rc = skip ? SHAPE_OK : shape_profile_update(w->profile, &schema, &array, &err);
        release_batch(&schema, &array);

        pthread_mutex_lock(&w->mu);
        if (rc != SHAPE_OK && !w->failed) {
            w->failed = rc;
            w->failure = err;
        }
        w->busy = 0;
        pthread_cond_broadcast(&w->changed);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int shape_profile_worker_new(shape_profile *profile, shape_profile_worker **out, shape_err *err)
{
    *out = NULL;
    shape_profile_worker *w = calloc(1, sizeof *w);
    if (!w) return shape_err_set(err, SHAPE_ENOMEM, "out of memory starting the profile worker");
    w->profile = profile;
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        free(w);
        return shape_err_set(err, SHAPE_EIO, "cannot start the profile worker (mutex)");
    }
    if (pthread_cond_init(&w->changed, NULL) != 0) {
        pthread_mutex_destroy(&w->mu);
        free(w);
        return shape_err_set(err, SHAPE_EIO, "cannot start the profile worker (condition variable)");
    }
    int rc = pthread_create(&w->thread, NULL, work, w);
    if (rc != 0) {
        pthread_cond_destroy(&w->changed);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return shape_err_set(err, SHAPE_EIO, "cannot start the profile worker thread: %s", strerror(rc));
    }
    *out = w;
    return SHAPE_OK;
}

/* With the lock held: the sticky failure, copied out. */
static int failure_locked(shape_profile_worker *w, shape_err *err)
{
    if (!w->failed) return SHAPE_OK;
    if (err) *err = w->failure;
    return w->failed;
}

int shape_profile_worker_submit(shape_profile_worker *w, struct ArrowSchema *schema, struct ArrowArray *array,
                                shape_err *err)
{
    struct ArrowSchema s = *schema;
    struct ArrowArray a = *array;
    schema->release = NULL;
    array->release = NULL;
    pthread_mutex_lock(&w->mu);
    while ((w->array.release || w->busy) && !w->failed) pthread_cond_wait(&w->changed, &w->mu);
    int rc = failure_locked(w, err);
    if (rc == SHAPE_OK) {
        if (!a.release) { /* nothing to profile: an already released batch */
            pthread_mutex_unlock(&w->mu);
            return SHAPE_OK;
        }
        w->schema = s;
        w->array = a;
        pthread_cond_broadcast(&w->changed);
    }
    pthread_mutex_unlock(&w->mu);
    if (rc != SHAPE_OK) release_batch(&s, &a);
    return rc;
}

int shape_profile_worker_drain(shape_profile_worker *w, shape_err *err)
{
    pthread_mutex_lock(&w->mu);
    while (w->array.release || w->busy) pthread_cond_wait(&w->changed, &w->mu);
    int rc = failure_locked(w, err);
    pthread_mutex_unlock(&w->mu);
    return rc;
}

void shape_profile_worker_free(shape_profile_worker *w)
{
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->changed);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
