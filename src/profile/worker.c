/* worker.c — shape_profile_worker: shape_profile_update on a thread of its
 * own, one batch behind the reader (why and the contract: shape/profile_worker.h).
 *
 * How: a shape_task (shape/task.h) runs one job at a time, so submit first
 * waits for the job before, which leaves at most the batch being profiled
 * and the one being read alive. The job profiles the batch it was handed and
 * releases it; its failure is kept (the first one) and read by the owner
 * only after a wait, which the task orders. After a failure, batches are
 * released unprofiled.
 */
#include "shape/profile_worker.h"

#include <stdlib.h>

#include "shape/task.h"

struct shape_profile_worker {
    shape_profile *profile;
    shape_task *task;
    struct ArrowSchema schema; /* the batch of the running job */
    struct ArrowArray array;
    int failed; /* the first failure's code, and its text */
    shape_err failure;
};

static void release_batch(struct ArrowSchema *schema, struct ArrowArray *array)
{
    if (array->release) array->release(array);
    if (schema->release) schema->release(schema);
}

static void profile_job(void *arg)
{
    shape_profile_worker *w = arg;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_profile_update(w->profile, &w->schema, &w->array, &err);
    release_batch(&w->schema, &w->array);
    if (rc != SHAPE_OK) {
        w->failed = rc;
        w->failure = err;
    }
}

int shape_profile_worker_new(shape_profile *profile, shape_profile_worker **out, shape_err *err)
{
    *out = NULL;
    shape_profile_worker *w = calloc(1, sizeof *w);
    if (!w) return shape_err_set(err, SHAPE_ENOMEM, "out of memory starting the profile worker");
    w->profile = profile;
    int rc = shape_task_new(&w->task, err);
    if (rc != SHAPE_OK) {
        free(w);
        return shape_err_prefix(err, "profile worker");
    }
    *out = w;
    return SHAPE_OK;
}

static int failure(const shape_profile_worker *w, shape_err *err)
{
    if (w->failed && err) *err = w->failure;
    return w->failed;
}

int shape_profile_worker_submit(shape_profile_worker *w, struct ArrowSchema *schema, struct ArrowArray *array,
                                shape_err *err)
{
    struct ArrowSchema s = *schema;
    struct ArrowArray a = *array;
    schema->release = NULL;
    array->release = NULL;
    shape_task_wait(w->task);
    int rc = failure(w, err);
    if (rc != SHAPE_OK || !a.release) {
        release_batch(&s, &a);
        return rc;
    }
    w->schema = s;
    w->array = a;
    shape_task_start(w->task, profile_job, w);
    return SHAPE_OK;
}

int shape_profile_worker_drain(shape_profile_worker *w, shape_err *err)
{
    shape_task_wait(w->task);
    return failure(w, err);
}

void shape_profile_worker_free(shape_profile_worker *w)
{
    if (!w) return;
    shape_task_free(w->task);
    free(w);
}
