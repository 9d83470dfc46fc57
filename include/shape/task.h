/* shape/task.h — one background thread that runs one job at a time.
 *
 * Why: the read path has stages that can overlap on two cores — fetching
 * the next batch while the last one is decoded, decoding while the one
 * before is profiled — but each stage must see its batches in order and one
 * at a time. A task is the smallest tool for that: start a job, do other
 * work, wait for it.
 *
 * How: a mutex, a condition variable and a job slot. shape_task_start waits
 * for the job before (if any) to finish, then hands the new one to the
 * thread and returns; shape_task_wait returns once the job started last has
 * finished. Everything the job wrote is visible to the caller after either
 * call returns (the mutex orders it). Jobs report through their own argument.
 *
 * Threads: one thread (the owner) calls the functions of a task.
 */
#ifndef SHAPE_TASK_H
#define SHAPE_TASK_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shape_task shape_task;

/* Start the thread. SHAPE_ENOMEM / SHAPE_EIO when it cannot be. */
int shape_task_new(shape_task **out, shape_err *err);

/* Wait for the job before to finish, then run job(arg) on the thread. */
void shape_task_start(shape_task *t, void (*job)(void *arg), void *arg);

/* Wait until the job started last (if any) has finished. */
void shape_task_wait(shape_task *t);

/* Wait, stop and free (NULL allowed). */
void shape_task_free(shape_task *t);

#ifdef __cplusplus
}
#endif

SHAPE_API_END
#endif
