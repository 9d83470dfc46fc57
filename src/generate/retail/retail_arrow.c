/* retail_arrow.c — retail table rows as Arrow record batches.
 *
 * Why: library users (DuckDB, pyarrow, polars through the C Data Interface)
 * and tests want a table's rows in Arrow form from any start row, without
 * going through JSON events.
 * How: one batch builder per call, a column per table column with the Arrow
 * type of its generator kind (int64, float64, utf8, timestamp[ns, UTC],
 * bool), rows appended straight from shape_retail_table_row(); the builder
 * is finished into the caller's ArrowSchema/ArrowArray (buffers moved, not
 * copied) and freed. Rows are a pure function of their number, so batches
 * from any start are the same rows a full run gives.
 */
#include "shape/generate_retail.h"

#include <string.h>

#include "shape/arrow.h"
#include "shape/generate_arrow.h"

int shape_retail_table_batch(shape_retail_table *t, uint64_t start, int64_t max_rows,
                             struct ArrowSchema *schema, struct ArrowArray *array, shape_err *err)
{
    array->release = NULL;
    uint64_t rows = shape_retail_table_rows(t);
    if (start > rows || max_rows < 0)
        return shape_err_set(err, SHAPE_EINVAL, "rows %llu..+%lld are outside table %s (%llu rows)",
                             (unsigned long long)start, (long long)max_rows,
                             shape_retail_table_name(shape_retail_table_id(t)), (unsigned long long)rows);
    uint64_t n = rows - start < (uint64_t)max_rows ? rows - start : (uint64_t)max_rows;
    const shape_gen_column *cols;
    size_t ncols = shape_retail_columns(shape_retail_table_id(t), &cols);
    shape_batch *b;
    SHAPE_RETURN_NOT_OK(shape_batch_new(&b, err));
    shape_column *out[SHAPE_GEN_MAX_COLUMNS];
    int rc = SHAPE_OK;
    for (size_t c = 0; rc == SHAPE_OK && c < ncols; c++)
        rc = shape_batch_add_column(b, cols[c].name, strlen(cols[c].name),
                                    (shape_type)shape_gen_arrow_type(cols[c].type), &out[c], err);
    shape_gen_row row;
    for (uint64_t r = 0; rc == SHAPE_OK && r < n; r++) {
        rc = shape_retail_table_row(t, start + r, &row, err);
        for (size_t c = 0; rc == SHAPE_OK && c < ncols; c++) rc = shape_gen_arrow_append(out[c], &row.values[c], err);
        if (rc == SHAPE_OK) rc = shape_batch_end_row(b, err);
    }
    if (rc == SHAPE_OK) rc = shape_batch_finish(b, schema, array, err);
    shape_batch_free(b);
    return rc;
}
