/* decode.c — message bodies to Arrow record batches (rules: shape/decode.h).
 *
 * How, per call:
 *   1. Only while the schema is not frozen: scan the messages once with the
 *      JSON scanner, collecting for each field name (in order of first
 *      appearance, from decodable bodies only) the set of value kinds seen
 *      (members read in runs along a chain of predicted names, as in step 2;
 *      nested values skipped, not rendered).
 *      The kinds decide each column's type; the columns are created in the
 *      batch builder, payload first, metadata after; the schema is frozen.
 *   2. Decode every message: walk the body's members, find each one's
 *      column — predicted from the previous member's column and matched in
 *      the body by the scanner, which follows that chain of predictions by
 *      itself for a run of members per call (shape_json_next_run), else the
 *      replaced prediction, else the builder's hash — and convert and append
 *      the value into its column (a nested value the scanner's fast render
 *      takes is written straight into the column's bytes). A
 *      duplicate key replaces the row's earlier value (the last one wins, as
 *      in every JSON object reader that builds a map). A value that does not
 *      fit marks the row bad, but the walk goes on so that an invalid body is
 *      still reported as undecodable rather than rejected. At the end of the
 *      body the row is either rolled back (undecodable/rejected) or
 *      completed with its metadata columns; untouched columns become null
 *      (with at most 64 payload columns the row keeps a bit mask of those it
 *      filled, pads the rest and commits without a pass over every column).
 *   3. Finish the builder into an ArrowSchema/ArrowArray, tagging it with
 *      shape.partition when one partition gave every row.
 * In the first batch only, a utf8 column whose values disagreed on a kind
 * holds the JSON text of its non-string values ("stringify"); later batches
 * reject such values, as a frozen schema must.
 */
#include "shape/decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/json.h"
#include "shape/timestamp.h"

#define DEFAULT_EVENT_TIME "_shape_event_time"

/* Value kinds seen in a column during inference. */
enum {
    SEEN_BOOL = 1u << 0,
    SEEN_INT = 1u << 1,
    SEEN_REAL = 1u << 2,
    SEEN_BIGINT = 1u << 3,
    SEEN_STRING = 1u << 4, /* strings, and nested values (stored as JSON text) */
    SEEN_OTHER_TEXT = 1u << 5
};

/* The metadata columns, in batch order after the payload. */
enum meta { META_KEY, META_TIMESTAMP, META_HEADERS, META_EVENT_TIME, META_PARTITION, META_OFFSET, META_N };
static const char *const meta_names[META_N] = {"_shape_key",        "_shape_timestamp",
                                               "_shape_headers",    "_shape_event_time",
                                               "_shape_partition",  "_shape_offset"};

struct shape_decoder {
    shape_decode_options opts;
    char *event_field;
    size_t event_field_len;
    int event_field_is_default;
    int wanted[META_N]; /* which metadata columns this decoder produces */

    shape_json_scanner *sc;
    shape_json_buf text; /* canonical JSON text of the current value */

    shape_batch *batch;
    int frozen;
    int64_t n_payload;         /* payload columns: indexes [0, n_payload) */
    shape_column **cols;       /* every column, by index */
    unsigned char *stringify;  /* per column, first batch only */
    shape_column *meta[META_N];

    /* Bodies of one stream list their fields in the same order nearly
     * always, give or take an optional field: the column that followed
     * column j last time (successor[j + 1]; successor[0]: the first member)
     * is tried first (one length compare and memcmp) before the hash
     * look-up. Keyed by the previous column rather than by position, an
     * optional field costs one miss instead of shifting every later member.
     * NULL until the first decode after freezing (then ncols + 1 entries). */
    int64_t *successor;
    /* The successor it replaced (same indexing), tried second: an optional
     * field then alternates between two predictions instead of sending every
     * change of mind to the hash. */
    int64_t *successor2;
    /* Per column: 1 when its name can be handed to the scanner as the
     * expected key (shape_json_next_expect: no '"', '\\' or control byte),
     * so that a predicted key is matched in the body instead of scanned. */
    unsigned char *plain_name;
    /* The chain the scanner follows by itself (shape_json_next_run): the
     * successor table and, per column, its name when it can be expected
     * (plain, and not a stringify column: rendering a scalar needs the
     * scanner to stop at it). */
    const char **hint_name;
    size_t *hint_len;
    char *quoted; /* every plain name as '"' name '"' ':', then 8 bytes of padding */
    shape_json_chain chain;

    /* The scanner's overflow count (shape_json_overflows) at the last batch:
     * when it moved, the batch's infinities are counted (values_overflowed)
     * by a pass over its float64 columns, so the per-value path pays
     * nothing. */
    uint64_t overflows_seen;
    shape_decode_stats stats;
};

void shape_decode_options_init(shape_decode_options *o)
{
    memset(o, 0, sizeof *o);
    o->event_time_unit = SHAPE_TIME_MS;
    o->on_error = SHAPE_ON_ERROR_SKIP;
    o->nested = 1;
    o->max_columns = SHAPE_DECODE_MAX_COLUMNS_DEFAULT;
}

int shape_time_unit_parse(const char *text, int *unit, shape_err *err)
{
    if (text && strcmp(text, "s") == 0) *unit = SHAPE_TIME_S;
    else if (text && strcmp(text, "ms") == 0) *unit = SHAPE_TIME_MS;
    else if (text && strcmp(text, "us") == 0) *unit = SHAPE_TIME_US;
    else return shape_err_set(err, SHAPE_EINVAL, "event_time_unit must be one of ['ms', 's', 'us']");
    return SHAPE_OK;
}

int shape_on_error_parse(const char *text, int *on_error, shape_err *err)
{
    if (text && strcmp(text, "skip") == 0) *on_error = SHAPE_ON_ERROR_SKIP;
    else if (text && strcmp(text, "raise") == 0) *on_error = SHAPE_ON_ERROR_RAISE;
    else return shape_err_set(err, SHAPE_EINVAL, "on_error must be 'skip' or 'raise'");
    return SHAPE_OK;
}

static int slice_is(const shape_json_slice *s, const char *name, size_t len)
{
    return s->len == len && memcmp(s->ptr, name, len) == 0;
}

/* Is this body field one the decoder never turns into a payload column? */
static int reserved_name(const shape_decoder *dec, const char *name, size_t len)
{
    for (int i = 0; i < META_N; i++)
        if (dec->wanted[i] && strlen(meta_names[i]) == len && memcmp(meta_names[i], name, len) == 0)
            return 1;
    return 0;
}

/* The successor table and the names it predicts with (successor_init). */
static void free_successors(shape_decoder *dec)
{
    free(dec->successor);
    free(dec->successor2);
    free(dec->plain_name);
    free(dec->hint_name);
    free(dec->hint_len);
    free(dec->quoted);
    dec->successor = dec->successor2 = NULL;
    dec->plain_name = NULL;
    dec->hint_name = NULL;
    dec->hint_len = NULL;
    dec->quoted = NULL;
}

void shape_decoder_free(shape_decoder *dec)
{
    if (!dec) return;
    free(dec->event_field);
    shape_json_scanner_free(dec->sc);
    shape_json_buf_reset(&dec->text);
    shape_batch_free(dec->batch);
    free(dec->cols);
    free(dec->stringify);
    free_successors(dec);
    free(dec);
}

/* Add a column and remember it by index. */
static int add_column(shape_decoder *dec, const char *name, size_t len, shape_type type,
                      int stringify, shape_column **out, shape_err *err)
{
    int64_t n = shape_batch_num_columns(dec->batch);
    shape_column **cols = realloc(dec->cols, (size_t)(n + 1) * sizeof *cols);
    if (!cols) return shape_err_set(err, SHAPE_ENOMEM, "out of memory adding a column");
    dec->cols = cols;
    unsigned char *str = realloc(dec->stringify, (size_t)(n + 1));
    if (!str) return shape_err_set(err, SHAPE_ENOMEM, "out of memory adding a column");
    dec->stringify = str;
    SHAPE_RETURN_NOT_OK(shape_batch_add_column(dec->batch, name, len, type, &cols[n], err));
    str[n] = (unsigned char)stringify;
    if (out) *out = cols[n];
    return SHAPE_OK;
}

/* Append the metadata columns after the payload ones. */
static int add_meta_columns(shape_decoder *dec, shape_err *err)
{
    static const shape_type types[META_N] = {SHAPE_TYPE_BINARY, SHAPE_TYPE_TIMESTAMP_US,
                                             SHAPE_TYPE_MAP,    SHAPE_TYPE_TIMESTAMP_US,
                                             SHAPE_TYPE_UTF8,   SHAPE_TYPE_INT64};
    for (int i = 0; i < META_N; i++) {
        if (!dec->wanted[i]) continue;
        shape_type t = types[i];
        if (i == META_HEADERS && !dec->opts.nested) t = SHAPE_TYPE_UTF8;
        SHAPE_RETURN_NOT_OK(add_column(dec, meta_names[i], strlen(meta_names[i]), t, 0,
                                       &dec->meta[i], err));
    }
    return SHAPE_OK;
}

/* Columns from a caller's schema: payload fields in its order, metadata
 * columns (canonical types) after them. */
static int columns_from_schema(shape_decoder *dec, const struct ArrowSchema *schema, shape_err *err)
{
    if (!schema->format || strcmp(schema->format, "+s") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "schema must be a struct of columns");
    for (int64_t i = 0; i < schema->n_children; i++) {
        const struct ArrowSchema *f = schema->children[i];
        const char *name = f->name ? f->name : "";
        size_t len = strlen(name);
        int known = 0;
        for (int m = 0; m < META_N; m++) known |= strcmp(name, meta_names[m]) == 0;
        if (known) continue;
        int type = shape_type_from_format(f->format ? f->format : "");
        if (type < 0 || type == SHAPE_TYPE_MAP)
            return shape_err_set(err, SHAPE_EINVAL, "schema column '%.64s' has an unsupported type '%.32s'",
                                 name, f->format ? f->format : "");
        SHAPE_RETURN_NOT_OK(add_column(dec, name, len, (shape_type)type, 0, NULL, err));
    }
    dec->n_payload = shape_batch_num_columns(dec->batch);
    SHAPE_RETURN_NOT_OK(add_meta_columns(dec, err));
    dec->frozen = 1;
    return SHAPE_OK;
}

int shape_decoder_new(const shape_decode_options *opts, const struct ArrowSchema *schema,
                      shape_decoder **out, shape_err *err)
{
    *out = NULL;
    shape_decoder *dec = calloc(1, sizeof *dec);
    if (!dec) return shape_err_set(err, SHAPE_ENOMEM, "out of memory creating a decoder");
    if (opts) dec->opts = *opts;
    else shape_decode_options_init(&dec->opts);
    const char *field = dec->opts.event_time_field;
    if (!field || !*field) field = DEFAULT_EVENT_TIME;
    dec->event_field = strdup(field);
    dec->event_field_len = strlen(field);
    dec->event_field_is_default = strcmp(field, DEFAULT_EVENT_TIME) == 0;
    dec->opts.event_time_field = dec->event_field;
    dec->wanted[META_KEY] = dec->opts.with_key;
    dec->wanted[META_TIMESTAMP] = dec->opts.with_timestamp;
    dec->wanted[META_HEADERS] = dec->opts.with_headers;
    dec->wanted[META_EVENT_TIME] = 1;
    dec->wanted[META_PARTITION] = dec->wanted[META_OFFSET] = dec->opts.with_offsets;
    dec->sc = shape_json_scanner_new();
    int rc = SHAPE_OK;
    if (!dec->event_field || !dec->sc)
        rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory creating a decoder");
    if (rc == SHAPE_OK && dec->opts.event_time_unit != SHAPE_TIME_S &&
        dec->opts.event_time_unit != SHAPE_TIME_MS && dec->opts.event_time_unit != SHAPE_TIME_US)
        rc = shape_err_set(err, SHAPE_EINVAL, "event_time_unit must be one of ['ms', 's', 'us']");
    if (rc == SHAPE_OK) rc = shape_batch_new(&dec->batch, err);
    if (rc == SHAPE_OK && schema) rc = columns_from_schema(dec, schema, err);
    if (rc != SHAPE_OK) {
        shape_decoder_free(dec);
        return rc;
    }
    *out = dec;
    return SHAPE_OK;
}

const shape_decode_stats *shape_decoder_stats(const shape_decoder *dec) { return &dec->stats; }

int shape_decoder_schema(const shape_decoder *dec, struct ArrowSchema *out, shape_err *err)
{
    if (!dec->frozen) return shape_err_set(err, SHAPE_EINVAL, "the schema is not known before the first batch");
    return shape_batch_schema(dec->batch, out, err);
}

/* ---- inference (first batch) ------------------------------------------- */

static unsigned kind_bits(const shape_json_member *m)
{
    switch (m->kind) {
    case SHAPE_JSON_TRUE:
    case SHAPE_JSON_FALSE: return SEEN_BOOL;
    case SHAPE_JSON_NUMBER:
        if (m->num.cls == SHAPE_JSON_INT) return SEEN_INT;
        if (m->num.cls == SHAPE_JSON_BIGINT) return SEEN_BIGINT;
        return SEEN_REAL;
    case SHAPE_JSON_STRING:
    case SHAPE_JSON_OBJECT:
    case SHAPE_JSON_ARRAY: return SEEN_STRING;
    default: return 0; /* null */
    }
}

static shape_type type_of(unsigned seen, int *stringify)
{
    *stringify = 0;
    switch (seen) {
    case SEEN_BOOL: return SHAPE_TYPE_BOOL;
    case SEEN_INT: return SHAPE_TYPE_INT64;
    case SEEN_REAL:
    case SEEN_INT | SEEN_REAL: return SHAPE_TYPE_FLOAT64;
    case 0:           /* only nulls: frozen as utf8 */
    case SEEN_STRING: return SHAPE_TYPE_UTF8;
    default: *stringify = 1; return SHAPE_TYPE_UTF8;
    }
}

typedef struct pending {
    size_t name_off, name_len; /* in the names buffer */
    int64_t idx;               /* the name's index in the registry when registered already, else -1 */
    unsigned bits;
} pending;

/* The names learnt so far during inference, with the chain the scanner
 * follows over them (shape_json_next_run), as the decoder does over its
 * columns: per registry index its successor, the successor it replaced, and
 * its name as a body writes it ('"' name '"' ':', plain names only). */
typedef struct registry {
    shape_batch *names; /* a throw-away batch builder: its hash map */
    shape_batch *over;  /* the same, of the names past max_columns */
    size_t cap;         /* entries of the arrays below (cap + 1 for succ, alt) */
    unsigned *seen;     /* value kinds seen, per index */
    int64_t *succ, *alt;
    const char **qname; /* into quoted, or NULL when not plain */
    size_t *qlen, *qoff;
    shape_json_buf quoted; /* every plain name quoted, then 8 bytes of padding */
    shape_json_chain chain;
} registry;

static void registry_free(registry *g)
{
    shape_batch_free(g->names);
    shape_batch_free(g->over);
    free(g->seen);
    free(g->succ);
    free(g->alt);
    free(g->qname);
    free(g->qlen);
    free(g->qoff);
    shape_json_buf_reset(&g->quoted);
}

/* Register a new name (index = the count before); SHAPE_OK or an error. */
static int registry_add(registry *g, const char *name, size_t len, shape_err *err)
{
    size_t idx = (size_t)shape_batch_num_columns(g->names);
    SHAPE_RETURN_NOT_OK(shape_batch_add_column(g->names, name, len, SHAPE_TYPE_NULL, NULL, err));
    if (idx >= g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 32;
        unsigned *seen = realloc(g->seen, cap * sizeof *seen);
        if (seen) g->seen = seen;
        int64_t *succ = realloc(g->succ, (cap + 1) * sizeof *succ);
        if (succ) g->succ = succ;
        int64_t *alt = realloc(g->alt, (cap + 1) * sizeof *alt);
        if (alt) g->alt = alt;
        const char **qname = realloc(g->qname, cap * sizeof *qname);
        if (qname) g->qname = qname;
        size_t *qlen = realloc(g->qlen, cap * sizeof *qlen);
        if (qlen) g->qlen = qlen;
        size_t *qoff = realloc(g->qoff, cap * sizeof *qoff);
        if (qoff) g->qoff = qoff;
        if (!seen || !succ || !alt || !qname || !qlen || !qoff)
            return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        for (size_t k = g->cap ? g->cap + 1 : 0; k <= cap; k++) g->succ[k] = g->alt[k] = -1; /* the new entries */
        g->cap = cap;
    }
    g->seen[idx] = 0;
    int plain = 1;
    for (size_t b = 0; b < len; b++) {
        unsigned char ch = (unsigned char)name[b];
        if (ch < 0x20 || ch == '"' || ch == '\\') plain = 0;
    }
    g->qname[idx] = NULL;
    g->qlen[idx] = 0;
    g->qoff[idx] = 0;
    if (plain) {
        shape_json_buf *q = &g->quoted;
        size_t at = q->len ? q->len - 8 : 0; /* over the padding */
        char *old = q->data;
        q->len = at;
        if (shape_json_buf_reserve(q, len + 3 + 8) != 0) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        q->data[at] = '"';
        memcpy(q->data + at + 1, name, len);
        q->data[at + len + 1] = '"';
        q->data[at + len + 2] = ':';
        memset(q->data + at + len + 3, 0, 8);
        q->len = at + len + 3 + 8;
        g->qoff[idx] = at;
        g->qlen[idx] = len + 3;
        if (q->data != old) { /* moved: every name's pointer again */
            for (size_t k = 0; k < idx; k++)
                if (g->qname[k]) g->qname[k] = q->data + g->qoff[k];
        }
        g->qname[idx] = q->data + at;
    }
    g->chain.next = g->succ;
    g->chain.alt = g->alt;
    g->chain.names = g->qname;
    g->chain.lens = g->qlen;
    return SHAPE_OK;
}

/* A new name past max_columns: no column; counted once per distinct name
 * (kept apart from the loop below, which it would otherwise slow). */
static __attribute__((noinline)) int over_limit(shape_decoder *dec, registry *g, const char *name, size_t len,
                                                shape_err *err)
{
    if (shape_batch_find_index(g->over, name, len) >= 0) return SHAPE_OK;
    dec->stats.columns_over_limit++;
    return shape_batch_add_column(g->over, name, len, SHAPE_TYPE_NULL, NULL, err);
}

/* Learn the payload columns from the decodable bodies of msgs, create all
 * columns and freeze. Each body is read in runs along the registry's chain
 * (a member whose name is the predicted one needs no test and no look-up);
 * a name not yet registered waits, copied, for the body to prove decodable,
 * and is then registered in the order of first appearance. */
static int infer_columns(shape_decoder *dec, const shape_message *msgs, size_t n, int grow, int64_t *added,
                         shape_err *err)
{
    registry g;
    memset(&g, 0, sizeof g);
    pending *row = NULL;
    size_t row_cap = 0;
    shape_json_buf keybuf = SHAPE_JSON_BUF_INIT;
    enum { RUN = 16 };
    shape_json_member run[RUN];
    int64_t run_idx[RUN];
    shape_batch *old = NULL; /* grow: the batch builder being replaced */
    int rc = shape_batch_new(&g.names, err);
    if (rc == SHAPE_OK) rc = shape_batch_new(&g.over, err);
    /* grow: the payload columns first, in their order, so that the names of
     * this batch are new only past them and the limit counts them */
    for (int64_t c = 0; grow && rc == SHAPE_OK && c < dec->n_payload; c++)
        rc = registry_add(&g, dec->cols[c]->name, dec->cols[c]->name_len, err);
    for (size_t i = 0; rc == SHAPE_OK && i < n; i++) {
        if (!msgs[i].value) continue;
        shape_json_begin(dec->sc, msgs[i].value, msgs[i].value_len);
        size_t n_row = 0;
        keybuf.len = 0;
        int64_t prev = -1;
        int r;
        for (;;) {
            size_t count;
            r = shape_json_next_run(dec->sc, g.cap ? &g.chain : NULL, prev, run, run_idx, RUN, &count);
            if (n_row + count > row_cap) {
                size_t cap = row_cap ? row_cap * 2 : 16;
                while (cap < n_row + count) cap *= 2;
                pending *grown = realloc(row, cap * sizeof *grown);
                if (!grown) { rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory"); break; }
                row = grown;
                row_cap = cap;
            }
            for (size_t k = 0; k < count && rc == SHAPE_OK; k++) {
                const shape_json_member *m = &run[k];
                int64_t idx = run_idx[k]; /* a registered name: it passed the tests below when registered */
                if (idx < 0) {
                    if (slice_is(&m->key, dec->event_field, dec->event_field_len)) continue;
                    if (!dec->event_field_is_default &&
                        slice_is(&m->key, DEFAULT_EVENT_TIME, strlen(DEFAULT_EVENT_TIME)))
                        continue;
                    if (reserved_name(dec, m->key.ptr, m->key.len)) continue;
                    idx = shape_batch_find_index(g.names, m->key.ptr, m->key.len);
                    if (idx >= 0) { /* registered: the chain learns it (as the decoder's column_of) */
                        g.alt[prev + 1] = g.succ[prev + 1];
                        g.succ[prev + 1] = idx;
                    }
                }
                row[n_row].bits = kind_bits(m);
                row[n_row].idx = idx;
                if (idx >= 0) {
                    prev = idx;
                } else { /* not registered yet: the name waits for the body's end */
                    if (shape_json_buf_reserve(&keybuf, m->key.len) != 0) {
                        rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
                        break;
                    }
                    row[n_row].name_off = keybuf.len;
                    row[n_row].name_len = m->key.len;
                    memcpy(keybuf.data + keybuf.len, m->key.ptr, m->key.len);
                    keybuf.len += m->key.len;
                }
                n_row++;
            }
            if (rc != SHAPE_OK || r != SHAPE_JSON_MEMBER) break;
        }
        if (rc != SHAPE_OK) break;
        if (r != SHAPE_JSON_DONE) continue; /* undecodable: contributes nothing */
        for (size_t k = 0; k < n_row && rc == SHAPE_OK; k++) {
            int64_t idx = row[k].idx;
            if (idx < 0) {
                const char *name = keybuf.data + row[k].name_off;
                if (memchr(name, '\0', row[k].name_len)) continue; /* a column name cannot hold NUL */
                idx = shape_batch_find_index(g.names, name, row[k].name_len); /* an earlier member of this body */
                if (idx < 0) {
                    if (SHAPE_UNLIKELY(dec->opts.max_columns > 0 &&
                                       shape_batch_num_columns(g.names) >= dec->opts.max_columns)) {
                        rc = over_limit(dec, &g, name, row[k].name_len, err);
                        continue;
                    }
                    idx = shape_batch_num_columns(g.names);
                    rc = registry_add(&g, name, row[k].name_len, err);
                }
            }
            if (rc == SHAPE_OK) g.seen[idx] |= row[k].bits;
        }
    }
    if (rc == SHAPE_OK && !grow && dec->stats.columns_over_limit && dec->opts.on_error == SHAPE_ON_ERROR_RAISE)
        rc = shape_err_set(err, SHAPE_EINVAL,
                           "the first batch has %lld fields, more than the limit of %lld columns: raise "
                           "--max-columns (each column costs ~45 KB in a profile) or let --on-error skip drop the rest",
                           (long long)(shape_batch_num_columns(g.names) + dec->stats.columns_over_limit),
                           (long long)dec->opts.max_columns);
    int64_t first_new = grow ? dec->n_payload : 0;
    *added = 0;
    for (int64_t c = first_new; rc == SHAPE_OK && c < shape_batch_num_columns(g.names); c++)
        *added += !grow || g.seen[c] != 0; /* grow: a field only null so far waits for a value */
    if (rc == SHAPE_OK && grow && *added) {
        /* A new builder: the payload columns kept (same types), the new
         * ones after them, then the metadata columns again. */
        old = dec->batch;
        dec->batch = NULL;
        rc = shape_batch_new(&dec->batch, err);
        for (int64_t c = 0; rc == SHAPE_OK && c < dec->n_payload; c++) {
            const shape_column *col = shape_batch_column(old, c);
            rc = add_column(dec, col->name, col->name_len, col->type, 0, NULL, err);
        }
    }
    for (int64_t c = first_new; rc == SHAPE_OK && (!grow || *added) && c < shape_batch_num_columns(g.names); c++) {
        if (grow && g.seen[c] == 0) continue;
        const shape_column *col = shape_batch_column(g.names, c);
        int stringify;
        shape_type t = type_of(g.seen[c], &stringify);
        rc = add_column(dec, col->name, col->name_len, t, stringify, NULL, err);
    }
    int64_t old_payload = dec->n_payload;
    if (rc == SHAPE_OK && (!grow || *added)) {
        dec->n_payload = shape_batch_num_columns(dec->batch);
        rc = add_meta_columns(dec, err);
    }
    if (old) {
        if (rc == SHAPE_OK) {
            shape_batch_free(old);
        } else { /* out of memory: back to the builder as it was, so that the decoder stays whole */
            shape_batch_free(dec->batch);
            dec->batch = old;
            dec->n_payload = old_payload;
            for (int64_t c = 0; c < shape_batch_num_columns(old); c++) dec->cols[c] = shape_batch_column(old, c);
            for (int i = 0; i < META_N; i++)
                if (dec->meta[i]) dec->meta[i] = shape_batch_find(old, meta_names[i], strlen(meta_names[i]));
        }
        free_successors(dec); /* sized by the columns: successor_init again */
    }
    if (rc == SHAPE_OK) dec->frozen = 1;
    registry_free(&g);
    free(row);
    shape_json_buf_reset(&keybuf);
    return rc;
}

/* ---- conversion ---------------------------------------------------------- */

/* A double that holds exactly the int64 i? */
static int int_exact_in_double(int64_t i)
{
    double d = (double)i;
    return d >= -9223372036854775808.0 && d < 9223372036854775808.0 && (int64_t)d == i;
}

/* Render the current value canonically into dec->text: 0 or a negative
 * JSON verdict (the body is then undecodable). */
static int render_current(shape_decoder *dec)
{
    dec->text.len = 0;
    return shape_json_render(dec->sc, &dec->text, 0);
}

/* append_value()'s answer when the value does not fit the column (a code
 * no shape error or JSON verdict uses). */
#define APPEND_MISFIT 100

/* Append member m to column c (index idx). Returns SHAPE_OK, APPEND_MISFIT
 * when the value does not fit the column (nothing appended), a shape error code of
 * the builder (memory, batch limit), or a negative JSON verdict when
 * rendering a nested value found the body invalid. */
static int append_value(shape_decoder *dec, shape_column *c, int64_t idx, const shape_json_member *m,
                        shape_err *err)
{
    if (m->kind == SHAPE_JSON_NULL) return shape_column_append_null(c, err);
    const shape_json_number *num = &m->num;
    switch (c->type) {
    case SHAPE_TYPE_INT64:
        if (m->kind == SHAPE_JSON_NUMBER && (num->flags & SHAPE_JSON_NUM_FITS_INT64))
            return shape_column_append_int64(c, num->i, err);
        break;
    case SHAPE_TYPE_FLOAT64:
        if (m->kind == SHAPE_JSON_NUMBER) {
            if (num->cls == SHAPE_JSON_REAL) {
                return shape_column_append_double(c, num->d, err);
            }
            if (num->cls == SHAPE_JSON_INT && int_exact_in_double(num->i))
                return shape_column_append_double(c, (double)num->i, err);
        }
        break;
    case SHAPE_TYPE_BOOL:
        if (m->kind == SHAPE_JSON_TRUE || m->kind == SHAPE_JSON_FALSE)
            return shape_column_append_bool(c, m->kind == SHAPE_JSON_TRUE, err);
        break;
    case SHAPE_TYPE_UTF8:
        if (m->kind == SHAPE_JSON_STRING) return shape_column_append_bytes(c, m->str.ptr, m->str.len, err);
        if (m->kind == SHAPE_JSON_OBJECT || m->kind == SHAPE_JSON_ARRAY) {
            /* Straight into the column when the fast render takes it (room
             * reserved for the rest of the body, which it never exceeds);
             * else, or when that room is not there (a batch near its byte
             * limit), through dec->text as any value. */
            size_t room = shape_json_pending_size(dec->sc), n;
            if (c->length < c->capacity && room <= (size_t)(c->data_capacity - c->data_length) &&
                shape_json_render_fast(dec->sc, (char *)c->data + c->data_length, &n)) {
                shape_column_commit_bytes(c, n);
                return SHAPE_OK;
            }
        }
        if (m->kind == SHAPE_JSON_OBJECT || m->kind == SHAPE_JSON_ARRAY || dec->stringify[idx]) {
            int r = render_current(dec);
            if (r < 0) return r;
            return shape_column_append_bytes(c, dec->text.data, dec->text.len, err);
        }
        break;
    case SHAPE_TYPE_BINARY:
        if (m->kind == SHAPE_JSON_STRING) return shape_column_append_bytes(c, m->str.ptr, m->str.len, err);
        break;
    case SHAPE_TYPE_TIMESTAMP_US:
    case SHAPE_TYPE_TIMESTAMP_NS: {
        int64_t us;
        if (m->kind == SHAPE_JSON_STRING && shape_parse_iso8601(m->str.ptr, m->str.len, &us) == 0) {
            if (c->type == SHAPE_TYPE_TIMESTAMP_US) return shape_column_append_timestamp(c, us, err);
            int64_t ns;
            if (!__builtin_mul_overflow(us, 1000, &ns)) return shape_column_append_timestamp(c, ns, err);
        }
        if (m->kind == SHAPE_JSON_NUMBER && num->cls == SHAPE_JSON_INT)
            return shape_column_append_timestamp(c, num->i, err);
        break;
    }
    default:
        break;
    }
    return APPEND_MISFIT;
}

/* The event time a body value gives, if it is a time. */
static int event_time_of(const shape_decoder *dec, const shape_json_member *m, int64_t *us)
{
    static const int64_t factor[3] = {1000000, 1000, 1};
    int64_t f = factor[dec->opts.event_time_unit];
    if (m->kind == SHAPE_JSON_STRING) return shape_parse_iso8601(m->str.ptr, m->str.len, us) == 0;
    if (m->kind != SHAPE_JSON_NUMBER) return 0;
    if (m->num.cls == SHAPE_JSON_INT) return !__builtin_mul_overflow(m->num.i, f, us);
    if (m->num.flags & SHAPE_JSON_NUM_OVERFLOW) return 0;
    double x = m->num.d * (double)f;
    /* In range (NaN is not), the cast truncates toward zero as required. */
    if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) return 0;
    *us = (int64_t)x;
    return 1;
}

/* ---- decoding ------------------------------------------------------------ */

static int append_hex_json(shape_json_buf *out, const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (shape_json_buf_reserve(out, 2 * n + 2) != 0) return -1;
    char *w = out->data + out->len;
    *w++ = '"';
    for (size_t i = 0; i < n; i++) {
        *w++ = hex[p[i] >> 4];
        *w++ = hex[p[i] & 15];
    }
    *w++ = '"';
    out->len = (size_t)(w - out->data);
    out->data[out->len] = '\0';
    return 0;
}

static int compare_headers(const void *a, const void *b)
{
    const shape_header *x = *(const shape_header *const *)a, *y = *(const shape_header *const *)b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, n);
    if (c) return c;
    return (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

/* Headers as JSON text: {"name": "hex", ...}, names sorted, the last of a
 * repeated name kept, Python's default spacing. */
static int headers_json(shape_decoder *dec, const shape_message *msg, shape_err *err)
{
    shape_json_buf *out = &dec->text;
    out->len = 0;
    const shape_header **sorted = malloc((msg->n_headers + 1) * sizeof *sorted);
    if (!sorted) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t i = 0; i < msg->n_headers; i++) sorted[i] = &msg->headers[i];
    /* Stable: equal names keep arrival order, so the last is the latest. */
    for (size_t i = 1; i < msg->n_headers; i++)
        for (size_t j = i; j > 0 && compare_headers(&sorted[j - 1], &sorted[j]) > 0; j--) {
            const shape_header *t = sorted[j - 1];
            sorted[j - 1] = sorted[j];
            sorted[j] = t;
        }
    int rc = shape_json_buf_reserve(out, 1) == 0 ? SHAPE_OK : SHAPE_ENOMEM;
    if (rc == SHAPE_OK) out->data[out->len++] = '{';
    int first = 1;
    for (size_t i = 0; rc == SHAPE_OK && i < msg->n_headers; i++) {
        if (i + 1 < msg->n_headers && compare_headers(&sorted[i], &sorted[i + 1]) == 0) continue;
        const shape_header *h = sorted[i];
        /* The name as a JSON string (quotes, backslashes and control bytes escaped). */
        size_t need = h->name_len * 6 + 16;
        char *quoted = malloc(need);
        if (!quoted) { rc = SHAPE_ENOMEM; break; }
        size_t q = 0;
        quoted[q++] = '"';
        for (size_t k = 0; k < h->name_len; k++) {
            unsigned char ch = (unsigned char)h->name[k];
            if (ch == '"' || ch == '\\') { quoted[q++] = '\\'; quoted[q++] = (char)ch; }
            else if (ch < 0x20) q += (size_t)snprintf(quoted + q, need - q, "\\u%04x", ch);
            else quoted[q++] = (char)ch;
        }
        quoted[q++] = '"';
        if (shape_json_buf_reserve(out, q + 4) != 0) { free(quoted); rc = SHAPE_ENOMEM; break; }
        if (!first) { out->data[out->len++] = ','; out->data[out->len++] = ' '; }
        first = 0;
        memcpy(out->data + out->len, quoted, q);
        out->len += q;
        free(quoted);
        out->data[out->len++] = ':';
        out->data[out->len++] = ' ';
        if (h->value) {
            if (append_hex_json(out, h->value, h->value_len) != 0) rc = SHAPE_ENOMEM;
        } else {
            if (shape_json_buf_reserve(out, 4) != 0) rc = SHAPE_ENOMEM;
            else { memcpy(out->data + out->len, "null", 4); out->len += 4; }
        }
    }
    if (rc == SHAPE_OK && shape_json_buf_reserve(out, 1) == 0) out->data[out->len++] = '}';
    else if (rc == SHAPE_OK) rc = SHAPE_ENOMEM;
    free(sorted);
    if (rc != SHAPE_OK) return shape_err_set(err, SHAPE_ENOMEM, "out of memory rendering headers");
    return SHAPE_OK;
}

static int append_meta(shape_decoder *dec, const shape_message *msg, int has_event_time,
                       int64_t event_time, shape_err *err)
{
    shape_column *c;
    if ((c = dec->meta[META_KEY]))
        SHAPE_RETURN_NOT_OK(msg->key ? shape_column_append_bytes(c, msg->key, msg->key_len, err)
                                     : shape_column_append_null(c, err));
    if ((c = dec->meta[META_TIMESTAMP]))
        SHAPE_RETURN_NOT_OK(msg->has_timestamp ? shape_column_append_timestamp(c, msg->timestamp_us, err)
                                               : shape_column_append_null(c, err));
    if ((c = dec->meta[META_HEADERS])) {
        if (c->type == SHAPE_TYPE_MAP) {
            SHAPE_RETURN_NOT_OK(shape_column_map_begin_row(c, err));
            for (size_t i = 0; i < msg->n_headers; i++) {
                const shape_header *h = &msg->headers[i];
                SHAPE_RETURN_NOT_OK(shape_column_map_append(c, h->name, h->name_len, h->value, h->value_len, err));
            }
            SHAPE_RETURN_NOT_OK(shape_column_map_end_row(c, err));
        } else {
            SHAPE_RETURN_NOT_OK(headers_json(dec, msg, err));
            SHAPE_RETURN_NOT_OK(shape_column_append_bytes(c, dec->text.data, dec->text.len, err));
        }
    }
    c = dec->meta[META_EVENT_TIME];
    if (has_event_time) SHAPE_RETURN_NOT_OK(shape_column_append_timestamp(c, event_time, err));
    else if (msg->has_timestamp) SHAPE_RETURN_NOT_OK(shape_column_append_timestamp(c, msg->timestamp_us, err));
    else SHAPE_RETURN_NOT_OK(shape_column_append_null(c, err));
    if ((c = dec->meta[META_PARTITION])) {
        char text[16];
        int n = snprintf(text, sizeof text, "%d", (int)msg->partition);
        SHAPE_RETURN_NOT_OK(shape_column_append_bytes(c, text, (size_t)n, err));
    }
    if ((c = dec->meta[META_OFFSET])) SHAPE_RETURN_NOT_OK(shape_column_append_int64(c, msg->offset, err));
    return SHAPE_OK;
}

/* The column index of the member named key that follows a member of column
 * prev (-1: the first member, or after unknown ones), or -1 when there is
 * no such column; through the successor prediction. */
static int64_t column_of(shape_decoder *dec, int64_t prev, const shape_json_slice *key)
{
    int64_t *succ = dec->successor, *alt = dec->successor2;
    if (succ) {
        int64_t guess = succ[prev + 1];
        if (guess >= 0) {
            const shape_column *c = dec->cols[guess];
            if (c->name_len == key->len && memcmp(c->name, key->ptr, key->len) == 0) return guess;
        }
        int64_t second = alt[prev + 1];
        if (second >= 0) {
            const shape_column *c = dec->cols[second];
            if (c->name_len == key->len && memcmp(c->name, key->ptr, key->len) == 0) {
                alt[prev + 1] = guess; /* the latest comes first */
                succ[prev + 1] = second;
                return second;
            }
        }
    }
    int64_t idx = shape_batch_find_index(dec->batch, key->ptr, key->len);
    if (succ && idx >= 0) {
        alt[prev + 1] = succ[prev + 1];
        succ[prev + 1] = idx;
    }
    return idx;
}

/* The names the scanner may expect: plain ones, except stringify columns
 * (first batch only). */
static void chain_names_set(shape_decoder *dec)
{
    if (!dec->hint_name) return;
    int64_t n = shape_batch_num_columns(dec->batch);
    size_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        size_t len = dec->plain_name[i] ? dec->cols[i]->name_len + 3 : 0;
        int ok = len && !dec->stringify[i];
        dec->hint_name[i] = ok ? dec->quoted + at : NULL;
        dec->hint_len[i] = ok ? len : 0;
        at += len;
    }
}

/* The successor table, once the columns are frozen (no prediction if out
 * of memory: still correct). */
static void successor_init(shape_decoder *dec)
{
    size_t n = (size_t)shape_batch_num_columns(dec->batch) + 1;
    dec->successor = malloc(n * sizeof *dec->successor);
    dec->successor2 = malloc(n * sizeof *dec->successor2);
    dec->plain_name = malloc(n);
    dec->hint_name = malloc(n * sizeof *dec->hint_name);
    dec->hint_len = malloc(n * sizeof *dec->hint_len);
    size_t quoted_bytes = 8;
    for (size_t i = 0; i + 1 < n; i++) quoted_bytes += dec->cols[i]->name_len + 3;
    dec->quoted = malloc(quoted_bytes);
    if (!dec->successor || !dec->successor2 || !dec->plain_name || !dec->hint_name || !dec->hint_len ||
        !dec->quoted) {
        free_successors(dec);
        return;
    }
    for (size_t i = 0; i < n; i++) dec->successor[i] = dec->successor2[i] = -1;
    for (size_t i = 0; i + 1 < n; i++) {
        const shape_column *c = dec->cols[i];
        int plain = 1;
        for (size_t k = 0; k < c->name_len; k++) {
            unsigned char ch = (unsigned char)c->name[k];
            if (ch < 0x20 || ch == '"' || ch == '\\') plain = 0;
        }
        dec->plain_name[i] = (unsigned char)plain;
    }
    /* The chain's names as a body writes them (shape_json_chain). */
    size_t at = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (!dec->plain_name[i]) continue;
        const shape_column *c = dec->cols[i];
        dec->quoted[at++] = '"';
        memcpy(dec->quoted + at, c->name, c->name_len);
        at += c->name_len;
        dec->quoted[at++] = '"';
        dec->quoted[at++] = ':';
    }
    memset(dec->quoted + at, 0, quoted_bytes - at);
    dec->chain.next = dec->successor;
    dec->chain.alt = dec->successor2;
    dec->chain.names = dec->hint_name;
    dec->chain.lens = dec->hint_len;
    chain_names_set(dec);
}

enum outcome { ROW_OK, ROW_UNDECODABLE, ROW_REJECTED };

/* Decode one message into the open row. *outcome says what became of it;
 * the return code is for failures of the decoder itself (memory, limits). */
static int decode_one(shape_decoder *dec, const shape_message *msg, int *outcome, shape_err *err)
{
    int64_t row = shape_batch_rows(dec->batch);
    *outcome = ROW_UNDECODABLE;
    if (!msg->value) {
        shape_err_set(err, SHAPE_EINVAL, "empty message");
        return SHAPE_OK;
    }
    shape_json_begin(dec->sc, msg->value, msg->value_len);
    int bad = 0, has_time = 0, r, rc = SHAPE_OK;
    int64_t event_time = 0;
    int64_t prev = -1;
    /* Payload columns this row filled (bit i: column i), when there are at
     * most 64 of them: the others are padded here, and the row is committed
     * without a pass over every column. */
    const int track = dec->n_payload <= 64;
    uint64_t filled = 0;
    /* Members come in runs (shape_json_next_run): the scanner follows the
     * successor chain by itself while each key is the predicted one, so a
     * body costs one call per run instead of one per member. Only the last
     * member of a run can be a miss, a pending container or a scalar to
     * render, so handling the run's members in order sees the scanner as a
     * member-by-member walk would. */
    enum { RUN = 16 };
    shape_json_member run[RUN];
    int64_t run_idx[RUN];
    const shape_json_chain *chain = dec->successor ? &dec->chain : NULL;
    int64_t appendable = dec->n_payload; /* columns a member may still append to: 0 once the row is bad */
    for (;;) {
        size_t count;
        r = shape_json_next_run(dec->sc, chain, prev, run, run_idx, RUN, &count);
        for (size_t k = 0; k < count; k++) {
            const shape_json_member *m = &run[k];
            int64_t idx = run_idx[k];
            if (idx < 0) { /* not the predicted key (a hit needs neither test below) */
                if (slice_is(&m->key, dec->event_field, dec->event_field_len)) {
                    has_time = event_time_of(dec, m, &event_time); /* the last occurrence decides */
                    continue;
                }
                idx = column_of(dec, prev, &m->key);
                if (idx < 0) { /* no such column: its value is dropped */
                    /* grow: a null loses nothing (the column, once made,
                     * is null in this row as in every row before it) */
                    if (!(dec->opts.grow && m->kind == SHAPE_JSON_NULL)) dec->stats.dropped_fields++;
                    continue;
                }
            }
            prev = idx;
            if (idx >= appendable) continue; /* metadata or _shape_event_time, or the row is bad */
            shape_column *c = dec->cols[idx];
            if (SHAPE_UNLIKELY(c->length > row)) shape_column_truncate(c, row, NULL); /* a repeated key: last wins */
            rc = append_value(dec, c, idx, m, err);
            if (SHAPE_UNLIKELY(rc != SHAPE_OK)) {
                if (rc == APPEND_MISFIT) { /* the row is rejected; the walk goes on */
                    bad = 1;
                    appendable = 0;
                    rc = SHAPE_OK;
                    continue;
                }
                if (rc < 0) { r = rc; rc = SHAPE_OK; } /* rendering found the body invalid */
                goto walked;
            }
            filled |= 1ull << (idx & 63); /* used only when track: then idx < 64 */
        }
        if (r != SHAPE_JSON_MEMBER) break;
    }
walked:
    if (rc != SHAPE_OK) {
        shape_batch_rollback_row(dec->batch);
        if (rc == SHAPE_ELIMIT)
            shape_err_prefix(err, "batch too large (lower --batch-size)");
        return rc;
    }
    if (r != SHAPE_JSON_DONE) {
        shape_batch_rollback_row(dec->batch);
        if (r == SHAPE_JSON_ENOMEM) return shape_err_set(err, SHAPE_ENOMEM, "out of memory decoding a message");
        char why[128];
        if (r == SHAPE_JSON_ENOTOBJECT) snprintf(why, sizeof why, "not a JSON object");
        else shape_json_error_format(shape_json_last_error(dec->sc), why, sizeof why);
        shape_err_set(err, SHAPE_EINVAL, "%s", why);
        return SHAPE_OK;
    }
    if (bad) {
        shape_batch_rollback_row(dec->batch);
        *outcome = ROW_REJECTED;
        shape_err_set(err, SHAPE_EINVAL, "a value does not fit the schema");
        return SHAPE_OK;
    }
    if (track) {
        uint64_t all = dec->n_payload == 64 ? ~0ull : (1ull << dec->n_payload) - 1;
        for (uint64_t missing = all & ~filled; missing && rc == SHAPE_OK; missing &= missing - 1)
            rc = shape_column_append_null(dec->cols[__builtin_ctzll(missing)], err);
    }
    if (rc == SHAPE_OK) rc = append_meta(dec, msg, has_time, event_time, err);
    if (rc == SHAPE_OK) {
        if (track) shape_batch_commit_row(dec->batch);
        else rc = shape_batch_end_row(dec->batch, err);
    }
    if (rc != SHAPE_OK) {
        shape_batch_rollback_row(dec->batch);
        if (rc == SHAPE_ELIMIT) shape_err_prefix(err, "batch too large (lower --batch-size)");
        return rc;
    }
    *outcome = ROW_OK;
    return SHAPE_OK;
}

/* values_overflowed: the infinities in the batch's float64 payload columns
 * (a JSON number is finite unless beyond the double range; rows rolled back
 * are not in the columns). */
static void count_infinities(shape_decoder *dec)
{
    for (int64_t i = 0; i < dec->n_payload; i++) {
        const shape_column *c = dec->cols[i];
        if (c->type != SHAPE_TYPE_FLOAT64) continue;
        const double *v = (const double *)c->values;
        for (int64_t k = 0; k < c->length; k++)
            if (v[k] - v[k] != 0 && v[k] == v[k]) dec->stats.values_overflowed++; /* inf - inf is NaN */
    }
}

int shape_decoder_decode(shape_decoder *dec, const shape_message *msgs, size_t n,
                         struct ArrowSchema *schema, struct ArrowArray *array, shape_err *err)
{
    array->release = NULL;
    dec->stats.messages += (int64_t)n;
    int first_batch = !dec->frozen;
    int64_t added = 0;
    if (first_batch) SHAPE_RETURN_NOT_OK(infer_columns(dec, msgs, n, 0, &added, err));
    if (!dec->successor) successor_init(dec);
    int32_t partition = 0;
    int mixed = 0;
    int rc = SHAPE_OK;
    const shape_decode_stats before = dec->stats;
    int grown = 0;
again:
    for (size_t i = 0; i < n; i++) {
        int outcome;
        rc = decode_one(dec, &msgs[i], &outcome, err);
        if (rc != SHAPE_OK) break;
        if (outcome == ROW_OK) {
            if (shape_batch_rows(dec->batch) == 1) partition = msgs[i].partition;
            else if (msgs[i].partition != partition) mixed = 1;
            continue;
        }
        if (outcome == ROW_UNDECODABLE) dec->stats.undecodable++;
        else dec->stats.rejected++;
        if (dec->opts.on_error == SHAPE_ON_ERROR_RAISE) {
            char reason[SHAPE_ERR_MESSAGE_MAX];
            snprintf(reason, sizeof reason, "%s", err->message);
            rc = shape_err_set(err, SHAPE_EINVAL, "partition %d offset %lld: %.400s", (int)msgs[i].partition,
                               (long long)msgs[i].offset, reason);
            break;
        }
    }
    /* grow: fields new in this batch (dropped above) become columns, typed
     * by this batch alone as a first batch would type them, and the batch
     * is decoded again; a batch that dropped nothing costs nothing more. */
    if (rc == SHAPE_OK && dec->opts.grow && !first_batch && !grown &&
        dec->stats.dropped_fields != before.dropped_fields &&
        !(dec->opts.max_columns > 0 && dec->n_payload >= dec->opts.max_columns)) {
        rc = infer_columns(dec, msgs, n, 1, &added, err);
        if (rc != SHAPE_OK) {
            shape_batch_clear_rows(dec->batch);
            return rc;
        }
        if (added) {
            grown = 1;
            shape_batch_clear_rows(dec->batch);
            dec->stats.undecodable = before.undecodable;
            dec->stats.rejected = before.rejected;
            dec->stats.dropped_fields = before.dropped_fields;
            partition = 0;
            mixed = 0;
            successor_init(dec);
            goto again;
        }
    }
    /* Mixed-kind utf8 columns take JSON text in the first batch only (and,
     * with grow, the new columns in the batch that made them). */
    if (first_batch || grown) {
        memset(dec->stringify, 0, (size_t)shape_batch_num_columns(dec->batch));
        chain_names_set(dec);
    }
    if (rc != SHAPE_OK || shape_batch_rows(dec->batch) == 0) {
        shape_batch_clear_rows(dec->batch);
        if (rc == SHAPE_OK) shape_err_clear(err);
        return rc;
    }
    if (SHAPE_UNLIKELY(shape_json_overflows(dec->sc) != dec->overflows_seen)) {
        dec->overflows_seen = shape_json_overflows(dec->sc);
        count_infinities(dec);
    }
    char text[16];
    snprintf(text, sizeof text, "%d", (int)partition);
    rc = shape_batch_set_metadata(dec->batch, "shape.partition", mixed ? NULL : text, err);
    int64_t rows = shape_batch_rows(dec->batch);
    if (rc == SHAPE_OK) rc = shape_batch_finish(dec->batch, schema, array, err);
    if (rc != SHAPE_OK) {
        shape_batch_clear_rows(dec->batch);
        return rc;
    }
    dec->stats.rows += rows;
    shape_err_clear(err);
    return SHAPE_OK;
}
