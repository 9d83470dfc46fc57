/* shape/task.h — one background thread that runs one job at a time.
 *
 * Why: the read path has stages that can overlap on two cores — fetching
 * the next batch while the last one is decoded, decoding while the one
 * before is profiled — but each stage must see its batches in order and one
 * at a time. A task is the smallest tool for that: start a job, do other
 * work, wait for it.
 *
 * How: a mutex, a condition variable and a queue of job slots (one by
 * default). shape_task_start waits while the queue is full — with one slot,
 * for the job before to finish — then queues the new job and returns; the
 * thread runs the jobs in the order started; shape_task_wait returns once
 * every job started has finished. Everything a job wrote is visible to the
 * caller once start has returned for the job `depth` after it, or wait has
 * returned (the mutex orders it). Jobs report through their own argument.
 * A deeper queue lets a stage whose jobs are short and uneven (a windowed
 * profile's small batches, the odd one closing windows) run ahead of its
 * consumer instead of meeting it at every job.
 *
 * Threads: one thread (the owner) calls the functions of a task.
 */
#ifndef SHAPE_TASK_H
#define SHAPE_TASK_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>

#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shape_task shape_task;

/* Start the thread, one job at a time (depth 1). SHAPE_ENOMEM / SHAPE_EIO
 * when it cannot be. */
int shape_task_new(shape_task **out, shape_err *err);
/* Likewise, with up to depth (>= 1) jobs queued or running. */
int shape_task_new_queue(shape_task **out, size_t depth, shape_err *err);

/* Wait while `depth` jobs are queued or running, then queue job(arg). */
void shape_task_start(shape_task *t, void (*job)(void *arg), void *arg);

/* Wait until every job started has finished. */
void shape_task_wait(shape_task *t);

/* Wait, stop and free (NULL allowed). */
void shape_task_free(shape_task *t);

#ifdef __cplusplus
}
#endif

SHAPE_API_END
#endif
