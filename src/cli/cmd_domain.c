/* cmd_domain.c — `shape domain check DOMAIN` and `shape domain sample DOMAIN
 * --table T -n 5`: authoring help for generation schemas (docs/DOMAINS.md).
 *
 * Why: a schema author wants to know, before pointing emit at a broker,
 * that the file is valid (every error one line naming table, column and
 * what to change) and what a few rows look like.
 * How: both look the domain up exactly as `shape emit` does (a path, a
 * built-in name, or NAME.json in --domain-path / SHAPE_DOMAIN_PATH) and open
 * it at --scale and --seed. check prints the tables in stream order with
 * their row counts and column types; sample prints rows 0..n-1 of one table
 * as the flat JSON events emit would send.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "shape/domain.h"
#include "shape/event.h"
#include "shape/generate_schema.h"

static int open_domain(const shape_args *args, const shape_domain_type **type, shape_domain **d, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(shape_domain_lookup_in(shape_args_positional(args, 1), shape_args_value(args, "domain-path"), type, err));
    const char *scale = shape_args_value(args, "scale");
    if (scale && !shape_domain_has_preset(*type, scale))
        return shape_err_set(err, SHAPE_EINVAL, "unknown scale '%.40s' for domain '%s'", scale, (*type)->name);
    int64_t seed;
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "seed", 0, INT64_MAX, (int64_t)(*type)->default_seed, &seed, err));
    return shape_domain_open(*type, scale, (uint64_t)seed, d, err);
}

static int check(const shape_domain *d)
{
    uint64_t total = 0;
    size_t nt = shape_domain_table_count(d);
    for (size_t t = 0; t < nt; t++) total += shape_domain_table_at(d, t)->rows;
    printf("%s: valid; scale %s, seed %llu, %zu tables, %llu rows in stream order:\n", shape_domain_name(d),
           shape_domain_preset(d), (unsigned long long)shape_domain_seed(d), nt, (unsigned long long)total);
    for (size_t t = 0; t < nt; t++) {
        const shape_domain_table *tab = shape_domain_table_at(d, t);
        printf("  %-20s %12llu rows  ", tab->name, (unsigned long long)tab->rows);
        for (size_t c = 0; c < tab->ncols; c++)
            printf("%s%s:%s%s", c ? ", " : "", tab->cols[c].name, shape_schema_type_name(tab->cols[c].type), tab->cols[c].nullable ? "?" : "");
        printf("\n");
    }
    return SHAPE_OK;
}

static int sample(const shape_args *args, shape_domain *d, shape_err *err)
{
    const char *table = shape_args_value(args, "table");
    int t = shape_domain_table_find(d, table);
    if (!table || t < 0) {
        char list[400] = "";
        size_t used = 0;
        for (size_t i = 0; i < shape_domain_table_count(d) && used < sizeof list - 1; i++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", shape_domain_table_at(d, i)->name);
        return shape_err_set(err, SHAPE_EINVAL, "%s --table NAME; choose from %s", table ? "unknown table in" : "sample needs", list);
    }
    int64_t n, from;
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "rows", 0, INT64_MAX, 5, &n, err));
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "from", 0, INT64_MAX, 0, &from, err));
    const shape_domain_table *tab = shape_domain_table_at(d, (size_t)t);
    shape_event_table et;
    SHAPE_RETURN_NOT_OK(shape_event_table_init(&et, tab->name, tab->cols, tab->ncols, tab->event_time_col, err));
    shape_domain_cursor *cur = NULL;
    SHAPE_RETURN_NOT_OK(shape_domain_cursor_open(d, (size_t)t, &cur, err));
    shape_gen_row *row = malloc(sizeof *row);
    int rc = row ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (uint64_t r = (uint64_t)from; rc == SHAPE_OK && r < tab->rows && r < (uint64_t)from + (uint64_t)n; r++) {
        rc = shape_domain_cursor_row(cur, r, row, err);
        if (rc != SHAPE_OK) break;
        size_t bound = shape_event_bound(&et, row);
        char *buf = malloc(bound + 1);
        if (!buf) {
            rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
            break;
        }
        char *end = shape_event_encode(&et, SHAPE_ENVELOPE_FLAT, r, row, buf);
        fwrite(buf, 1, (size_t)(end - buf), stdout);
        fputc('\n', stdout);
        free(buf);
    }
    free(row);
    shape_domain_cursor_free(cur);
    return rc;
}

static int run_domain(const shape_args *args, shape_err *err)
{
    const char *verb = shape_args_positional(args, 0);
    if (strcmp(verb, "check") != 0 && strcmp(verb, "sample") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "unknown domain command '%.40s'; choose from check, sample", verb);
    const shape_domain_type *type = NULL;
    shape_domain *d = NULL;
    int rc = open_domain(args, &type, &d, err);
    if (rc == SHAPE_OK) rc = verb[0] == 'c' ? check(d) : sample(args, d, err);
    shape_domain_free(d);
    shape_domain_type_free(type);
    return rc;
}

static const shape_arg_spec domain_args[] = {
    {"scale", 0, SHAPE_ARG_VALUE, "PRESET", "the schema's scale", "Scale preset to check or sample."},
    {"seed", 0, SHAPE_ARG_VALUE, "INT", "model.seed", "Seed of the generator."},
    {"table", 't', SHAPE_ARG_VALUE, "NAME", NULL, "sample: the table to show."},
    {"rows", 'n', SHAPE_ARG_VALUE, "N", "5", "sample: how many rows."},
    {"from", 0, SHAPE_ARG_VALUE, "ROW", "0", "sample: the first row shown (any row is generated on its own)."},
    {"domain-path", 0, SHAPE_ARG_VALUE, "DIR[:DIR]", "SHAPE_DOMAIN_PATH", "Folders of generation schemas (NAME.json)."},
    {0},
};

const shape_command shape_cmd_domain = {
    .name = "domain",
    .summary = "Check a generation schema, or show a few rows of one of its tables.",
    .positional = "check|sample DOMAIN",
    .min_positional = 2,
    .max_positional = 2,
    .args = domain_args,
    .epilog = "Examples:\n"
              "  shape domain check examples/domains/payments.json\n"
              "  shape domain sample examples/domains/payments.json --table transaction -n 5\n"
              "DOMAIN is what `shape emit` takes: a schema PATH.json, a built-in name, or NAME.json in\n"
              "--domain-path or SHAPE_DOMAIN_PATH. A bad schema is one line naming table, column and what\n"
              "to change, exit 2. The format: docs/DOMAINS.md.",
    .run = run_domain,
};
