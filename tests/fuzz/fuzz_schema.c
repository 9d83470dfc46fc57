/* fuzz_schema.c — libFuzzer target for the generation-schema loader
 * (shape/generate_schema.h, src/generate/schema/).
 *
 * Why: `shape emit PATH.json` reads a file a person wrote; any text must be
 * refused with a one-line message or accepted as a domain whose every row
 * can be generated — never a crash, a hang, a leak or a sanitizer report.
 * How: the input is parsed as a schema, its datasets looked up in
 * tests/data/domains (SHAPE_FUZZ_DATASETS: the small test datasets tree,
 * people and places, so hierarchy, bootstrap and address reach their
 * builders; a name that is not there is refused). A refusal must be
 * SHAPE_EINVAL/SHAPE_ENOTFOUND with a non-empty message. An accepted schema
 * is opened at its default preset and, when its tables are small (at most
 * 10,000 rows in all, so one run stays fast), rows 0, 1 and the last of
 * every table are generated — which walks foreign keys, lookups and
 * computed totals through the row evaluator.
 * Seeds: the schemas of examples/domains/ and tests/data/domains/ (every
 * strategy; strat.json those of schema_strat.c over the test datasets),
 * copied by CMakeLists.txt.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape/domain.h"
#include "shape/generate_schema.h"

#ifndef SHAPE_FUZZ_DATASETS
#define SHAPE_FUZZ_DATASETS "/nonexistent-fuzz-dir"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    shape_err err;
    shape_err_clear(&err);
    const shape_domain_type *type = NULL;
    int rc = shape_schema_domain_parse((const char *)data, size, SHAPE_FUZZ_DATASETS, &type, &err);
    if (rc != SHAPE_OK) {
        if ((rc != SHAPE_EINVAL && rc != SHAPE_ENOTFOUND && rc != SHAPE_ENOMEM) || !err.message[0]) abort();
        return 0;
    }
    shape_domain *d = NULL;
    if (shape_domain_open(type, NULL, type->default_seed, &d, &err) == SHAPE_OK) {
        uint64_t total = 0;
        for (size_t t = 0; t < shape_domain_table_count(d); t++) total += shape_domain_table_at(d, t)->rows;
        static shape_gen_row row;
        for (size_t t = 0; total <= 10000 && t < shape_domain_table_count(d); t++) {
            const shape_domain_table *tab = shape_domain_table_at(d, t);
            shape_domain_cursor *c = NULL;
            if (shape_domain_cursor_open(d, t, &c, &err) != SHAPE_OK) abort();
            uint64_t rows[3] = {0, 1, tab->rows ? tab->rows - 1 : 0};
            for (int i = 0; i < 3; i++)
                if (rows[i] < tab->rows) {
                    rc = shape_domain_cursor_row(c, rows[i], &row, &err);
                    if (rc == SHAPE_OK && row.ncols != tab->ncols) abort();
                    for (size_t k = 0; rc == SHAPE_OK && k < row.ncols; k++) {
                        const shape_gen_value *v = &row.values[k];
                        if (v->kind != SHAPE_GEN_NULL && v->kind != tab->cols[k].type) abort();
                        if (v->kind == SHAPE_GEN_NULL && !tab->cols[k].nullable) abort();
                    }
                }
            shape_domain_cursor_free(c);
        }
        shape_domain_free(d);
    }
    shape_schema_domain_free(type);
    return 0;
}
