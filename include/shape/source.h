/* shape/source.h — a stream source instance: batches with exact positions.
 *
 * Why: the commands that read streams (stream-read, stream-profile) do not
 * care whether messages come from files or from Kafka; they want Arrow
 * batches, each paired with the position just after it, the decoder's
 * counters, and a clean close. Every source (the built-in file source, the
 * kafka:// plugin) hands out this one interface.
 *
 * How: an instance is a struct whose first member is `shape_source`, a
 * pointer to its function table; the inline wrappers below dispatch.
 *
 * Contract of next():
 *   - on success *end tells whether the stream has ended (then nothing else
 *     was written); otherwise *after holds the position just after the
 *     messages consumed by this call, and *array (with *schema) the batch —
 *     or array->release == NULL when none of those messages made a row (all
 *     undecodable, say): the position still advanced;
 *   - a batch never mixes partitions when the source has partitions;
 *   - passing *after back as `start` to a new instance resumes exactly after
 *     this batch;
 *   - SHAPE_ECONN means a transient connection failure: the caller may open
 *     a new instance at its last position and go on; any other error ends
 *     the read.
 *
 * progress() (optional, plugin ABI 4) tells how far the read is, for a
 * progress display only: it never changes what next() hands out.
 */
#ifndef SHAPE_SOURCE_H
#define SHAPE_SOURCE_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <signal.h>

#include "shape/arrow.h"
#include "shape/decode.h"
#include "shape/offsets.h"
#include "shape/options.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shape_source shape_source;

/* How far a read is. -1 means the source cannot tell. */
typedef struct shape_source_progress {
    int64_t partitions_total; /* partitions this instance reads */
    int64_t partitions_done;  /* of those, read to the end a bounded read stops at */
} shape_source_progress;

typedef struct shape_source_vtable {
    int (*next)(shape_source *src, struct ArrowSchema *schema, struct ArrowArray *array,
                shape_offsets *after, int *end, shape_err *err);
    const shape_decode_stats *(*stats)(const shape_source *src);
    void (*close)(shape_source *src); /* frees the instance */
    /* --- ABI 4 --- */
    /* Fill *out (both fields preset to -1). NULL = the source cannot tell. */
    void (*progress)(const shape_source *src, shape_source_progress *out);
} shape_source_vtable;

struct shape_source {
    const shape_source_vtable *vt;
};

/* Open a source for uri with options (see each source's table of options);
 * start (may be NULL) is where to begin. */
typedef int (*shape_source_open_fn)(const char *uri, const shape_options *options,
                                    const shape_offsets *start, shape_source **out, shape_err *err);
/* The same with the run's stop flag (plugin ABI 7, shape_source_type's
 * open_stoppable): an open that waits returns SHAPE_ECONN within about
 * 100 ms of *stop becoming non-zero. */
typedef int (*shape_source_stoppable_open_fn)(const char *uri, const shape_options *options,
                                              const shape_offsets *start, const volatile sig_atomic_t *stop,
                                              shape_source **out, shape_err *err);

static inline int shape_source_next(shape_source *src, struct ArrowSchema *schema,
                                    struct ArrowArray *array, shape_offsets *after, int *end,
                                    shape_err *err)
{
    return src->vt->next(src, schema, array, after, end, err);
}

static inline const shape_decode_stats *shape_source_stats(const shape_source *src)
{
    return src->vt->stats(src);
}

/* The source's progress; -1 in each field it cannot tell. */
static inline shape_source_progress shape_source_progress_of(const shape_source *src)
{
    shape_source_progress p = {-1, -1};
    if (src->vt->progress) src->vt->progress(src, &p);
    return p;
}

static inline void shape_source_close(shape_source *src)
{
    if (src) src->vt->close(src);
}

/* Read the decoder options every source shares (event_time_field,
 * event_time_unit, on_error, with_key, with_headers, with_timestamp,
 * with_offsets, nested) from options. */
int shape_decode_options_from(const shape_options *options, shape_decode_options *out, shape_err *err);

/* The `schema` option (src/core/schema_option.c): a JSON list of [name,
 * Arrow format] pairs fixing a source's columns up front, so a reopened read
 * decodes like the first one (e.g. [["id","l"],["v","g"]]; metadata
 * columns such as _shape_event_time may be listed and keep their canonical
 * types). shape_decode_schema_from fills *out (a "+s" schema the caller
 * releases) and sets *present when the option is given. */
int shape_decode_schema_from(const shape_options *options, struct ArrowSchema *out, int *present, shape_err *err);
/* A decoder configured from the options a source was opened with: the
 * decoder options above and, when given, the `schema` option. */
int shape_decoder_from_options(const shape_options *options, shape_decoder **out, shape_err *err);

/* The built-in file source: JSON lines from a path, a file:// URI, a folder,
 * a glob, or "-" (stdin). shape_file_source_claims(uri) tells whether a URI
 * is one of those (no scheme, "-", or file://). */
int shape_file_source_claims(const char *uri);
int shape_file_source_open(const char *uri, const shape_options *options, const shape_offsets *start,
                           shape_source **out, shape_err *err);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif
