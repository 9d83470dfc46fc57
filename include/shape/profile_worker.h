/* shape/profile_worker.h — profile batches on a thread of its own, one batch
 * behind the reader.
 *
 * Why: reading a stream (fetching, decoding JSON into Arrow) and profiling
 * the decoded batches cost about the same CPU per message; done one after the
 * other on one thread, `shape stream-profile` runs at half the speed of a
 * plain read. A worker thread profiles batch k while the reader decodes batch
 * k + 1, so the two overlap on two cores, and the profile is exactly the one
 * the same batches give in the same order on one thread (a single worker
 * updates the profile, in submission order).
 *
 * How: a shape_task (shape/task.h) runs the profile jobs one at a time.
 * shape_profile_worker_submit moves a batch in (Arrow move semantics: the
 * caller's structs are marked released) and returns at once unless the
 * worker still profiles an earlier batch, in which case it waits for it
 * first — so at most two batches are alive: the one being profiled and the
 * one being decoded. The worker releases each batch after profiling it. The
 * first failure sticks: later submissions release their batch unprofiled
 * and return it, and so does drain.
 *
 * Ownership and threads: the worker uses the profile between submit and the
 * next drain; the caller must not touch the profile in between (a checkpoint
 * drains first). shape_profile_worker_free drains, stops the thread and
 * leaves the profile to its owner. One thread calls the worker's functions.
 */
#ifndef SHAPE_PROFILE_WORKER_H
#define SHAPE_PROFILE_WORKER_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include "shape/arrow.h"
#include "shape/error.h"
#include "shape/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shape_profile_worker shape_profile_worker;

/* Start a worker for `profile` (not owned). SHAPE_ENOMEM / SHAPE_EIO when the
 * thread cannot be created. */
int shape_profile_worker_new(shape_profile *profile, shape_profile_worker **out, shape_err *err);

/* Hand over one struct batch for shape_profile_update. Both structs are moved
 * (their release set to NULL) whatever the result. Returns the failure of an
 * earlier batch, if one failed; this batch is then released unprofiled. */
int shape_profile_worker_submit(shape_profile_worker *w, struct ArrowSchema *schema, struct ArrowArray *array,
                                shape_err *err);

/* Wait until every batch handed over is profiled; the first failure, if any.
 * Afterwards the caller may read (or save) the profile until the next submit. */
int shape_profile_worker_drain(shape_profile_worker *w, shape_err *err);

/* Drain, stop and free the worker (NULL allowed); a failure is dropped (call
 * drain first to see it). */
void shape_profile_worker_free(shape_profile_worker *w);

#ifdef __cplusplus
}
#endif

SHAPE_API_END
#endif
