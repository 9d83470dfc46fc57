/* event_rows.c — flat events as Arrow record batches, for destinations that
 * encode events themselves (registry formats; shape/event.h).
 *
 * Why: an Avro or Protobuf encoder needs typed values and a schema that
 * says what they are, not JSON text. The columns are the flat event's
 * (spec-kafka §3.4): the table's columns, then _shape_table, _shape_seq and
 * _shape_event_time when the table has a timestamp column.
 * How: the schema is made once per table with the exact types and
 * nullability of the generator's columns (timestamps zone-less "tsn:", as
 * the flat JSON writes them; _shape_table and _shape_seq not nullable), so
 * it is identical for every batch; the values go through the core's batch
 * builder (whose buffers are recycled from released batches), one inline
 * append per column (shape/generate_arrow.h, as a domain's Arrow batches
 * append) and a row commit without the builder's padding pass (every column
 * gets exactly one value), and its exported array is paired with this
 * schema. Builder and schema are used by one thread at a time; the schema
 * is read-only once made.
 */
#include <string.h>

#include "shape/arrow.h"
#include "shape/event.h"
#include "shape/generate_arrow.h"

static const char *arrow_format(uint8_t kind)
{
    switch (kind) {
    case SHAPE_GEN_INT64: return "l";
    case SHAPE_GEN_FLOAT64: return "g";
    case SHAPE_GEN_STRING: return "u";
    case SHAPE_GEN_TIMESTAMP_NS: return "tsn:";
    case SHAPE_GEN_BOOL: return "b";
    default: return NULL;
    }
}

static int add_column(shape_event_rows *r, size_t i, const char *name, uint8_t kind, int nullable,
                      shape_err *err)
{
    const char *format = arrow_format(kind);
    if (!format) return shape_err_set(err, SHAPE_EINTERNAL, "column '%s' has no Arrow type", name);
    SHAPE_RETURN_NOT_OK(shape_arrow_schema_make(r->schema.children[i], format, name, NULL,
                                                nullable ? ARROW_FLAG_NULLABLE : 0, 0, err));
    return shape_batch_add_column(r->builder, name, strlen(name), (shape_type)shape_gen_arrow_type(kind),
                                  &r->cols[i], err);
}

int shape_event_rows_init(shape_event_rows *r, const shape_event_table *t, shape_err *err)
{
    memset(r, 0, sizeof *r);
    r->table = t;
    r->name_len = strlen(t->name);
    r->ncols = t->ncols + 2 + (t->event_time_col >= 0 ? 1 : 0);
    int rc = shape_batch_new(&r->builder, err);
    if (rc == SHAPE_OK) rc = shape_arrow_schema_make(&r->schema, "+s", "", NULL, 0, (int64_t)r->ncols, err);
    for (size_t i = 0; rc == SHAPE_OK && i < t->ncols; i++)
        rc = add_column(r, i, t->cols[i].name, t->cols[i].type, t->cols[i].nullable, err);
    if (rc == SHAPE_OK) rc = add_column(r, t->ncols, "_shape_table", SHAPE_GEN_STRING, 0, err);
    if (rc == SHAPE_OK) rc = add_column(r, t->ncols + 1, "_shape_seq", SHAPE_GEN_INT64, 0, err);
    if (rc == SHAPE_OK && t->event_time_col >= 0)
        rc = add_column(r, t->ncols + 2, "_shape_event_time", SHAPE_GEN_TIMESTAMP_NS,
                        t->cols[t->event_time_col].nullable, err);
    if (rc != SHAPE_OK) shape_event_rows_reset(r);
    return rc;
}

int shape_event_rows_append(shape_event_rows *r, uint64_t seq, const shape_gen_row *row, shape_err *err)
{
    const shape_event_table *t = r->table;
    int rc = SHAPE_OK;
    for (size_t i = 0; rc == SHAPE_OK && i < t->ncols; i++) {
        const shape_gen_value *v = &row->values[i];
        if (v->kind != SHAPE_GEN_NULL && v->kind != t->cols[i].type)
            rc = shape_err_set(err, SHAPE_EINTERNAL, "column '%s' of table '%s' got a value of another type",
                               t->cols[i].name, t->name);
        else
            rc = shape_gen_arrow_append_inline(r->cols[i], v, err);
    }
    if (rc == SHAPE_OK) rc = shape_column_append_bytes(r->cols[t->ncols], t->name, r->name_len, err);
    if (rc == SHAPE_OK) rc = shape_column_append_int64(r->cols[t->ncols + 1], (int64_t)seq, err);
    if (rc == SHAPE_OK && t->event_time_col >= 0)
        rc = shape_gen_arrow_append_inline(r->cols[t->ncols + 2], &row->values[t->event_time_col], err);
    if (rc != SHAPE_OK) {
        shape_batch_rollback_row(r->builder);
        return rc;
    }
    shape_batch_commit_row(r->builder); /* every column got exactly one value */
    return SHAPE_OK;
}

int shape_event_rows_finish(shape_event_rows *r, struct ArrowArray *out, shape_err *err)
{
    return shape_batch_finish(r->builder, NULL, out, err);
}

void shape_event_rows_reset(shape_event_rows *r)
{
    if (!r) return;
    shape_batch_free(r->builder);
    r->builder = NULL;
    if (r->schema.release) r->schema.release(&r->schema);
}
