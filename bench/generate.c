/* bench/generate.c — how fast the retail generator turns rows into flat JSON
 * events, on one core.
 *
 * Why: `shape emit` must feed Kafka faster than a broker takes it; the
 * target (issue 6) is >= 2,000,000 events/s per core for `medium`
 * (1,965,400 events), with peak RSS reported (memory must stay flat).
 * How: generate every row of every table in stream order, render each as a
 * flat event exactly as spec-core §3.3 prints it — the columns in order,
 * then "_shape_table", "_shape_seq" and "_shape_event_time" (absent for
 * tables without a timestamp); floats as Python's repr (shortest
 * round-trip, "20.0" for integral values), timestamps as
 * "YYYY-MM-DDTHH:MM:SS.fffffffff" — into a 256 KB buffer that is dropped
 * (checksummed) whenever it fills, as a producer would hand it over.
 * The encoder here is the benchmark's own; the emit runtime has its own.
 *
 * Not built by default. Build and run from the repository root after `make`:
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Ibuild/include \
 *      bench/generate.c -Lbuild/lib -lshape -lm -Wl,-rpath,$PWD/build/lib -o build/bench-generate
 *   build/bench-generate [PRESET [SEED [REPEAT]]]     (default: medium 42 3)
 *   build/bench-generate small 42 1 --print | head     (print events instead)
 * Prints per-table and total events/s and MB/s (best of REPEAT runs) and
 * the process's peak RSS (getrusage).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "shape/generate.h"
#include "shape/generate_retail.h"

#define BUF_SIZE (256 * 1024)
#define MAX_EVENT 4096

typedef struct out {
    char *buf;
    size_t len;
    uint64_t bytes;
    uint64_t checksum;
    int print;
} out;

static void flush(out *o)
{
    if (o->print) fwrite(o->buf, 1, o->len, stdout);
    /* "drop" the batch, but make it observable so nothing is optimised away */
    for (size_t i = 0; i < o->len; i += 64) o->checksum = o->checksum * 31 + (unsigned char)o->buf[i];
    o->bytes += o->len;
    o->len = 0;
}

/* ---- encoders ----------------------------------------------------------- */

static char *put_u64(char *p, uint64_t v)
{
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n) *p++ = tmp[--n];
    return p;
}

static char *put_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

static char *put_str(char *p, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            *p++ = '\\';
            *p++ = (char)c;
        } else if (c < 0x20) {
            memcpy(p, "\\u00", 4);
            p[4] = hex[c >> 4];
            p[5] = hex[c & 15];
            p += 6;
        } else {
            *p++ = (char)c;
        }
    }
    *p++ = '"';
    return p;
}

/* Python's repr of a float: the shortest decimal that reads back as x. Fast
 * path for the values generators make (few decimals, moderate size): the
 * first k with round(x * 10^k) / 10^k == x gives the shortest digits, since
 * n / 10^k computed in doubles is exactly what parsing the text gives. */
static char *put_f64(char *p, double x)
{
    static const double p10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    if (x != x || x - x != 0) {
        memcpy(p, "null", 4);
        return p + 4;
    }
    if (x == 0) { /* 0.0 and -0.0 */
        if (1 / x < 0) *p++ = '-';
        memcpy(p, "0.0", 3);
        return p + 3;
    }
    double ax = x < 0 ? -x : x;
    if (ax >= 1e-4 && ax < 1e15) {
        /* Most generated values have two decimals (money); when x < 1e13
         * two decimals are spaced wider than its ulp, so a match at k = 2
         * with trailing zeros trimmed is the shortest form. */
        if (ax < 1e13 && x != (double)(int64_t)x) {
            double v = x * 100.0;
            int64_t n = (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
            if ((double)n / 100.0 == x) {
                if (n < 0) {
                    *p++ = '-';
                    n = -n;
                }
                p = put_u64(p, (uint64_t)n / 100);
                *p++ = '.';
                *p++ = (char)('0' + n / 10 % 10);
                if (n % 10) *p++ = (char)('0' + n % 10);
                return p;
            }
        }
        for (int k = 0; k <= 9; k++) {
            double v = x * p10[k];
            if (v > 9007199254740992.0 || v < -9007199254740992.0) break;
            int64_t n = (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
            if ((double)n / p10[k] != x) continue;
            if (n < 0) {
                *p++ = '-';
                n = -n;
            }
            char digits[24];
            int nd = (int)(put_u64(digits, (uint64_t)n) - digits);
            if (k == 0) {
                memcpy(p, digits, (size_t)nd);
                p += nd;
                memcpy(p, ".0", 2);
                return p + 2;
            }
            if (nd <= k) { /* 0.0ddd */
                *p++ = '0';
                *p++ = '.';
                for (int z = 0; z < k - nd; z++) *p++ = '0';
                memcpy(p, digits, (size_t)nd);
                return p + nd;
            }
            memcpy(p, digits, (size_t)(nd - k));
            p += nd - k;
            *p++ = '.';
            memcpy(p, digits + nd - k, (size_t)k);
            return p + k;
        }
    }
    /* General case: shortest %.Ng that round-trips, in repr's layout. */
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, x);
        if (strtod(tmp, NULL) == x) break;
    }
    char *e = strchr(tmp, 'e');
    int exp10 = atoi(e + 1);
    *e = 0;
    char mant[24];
    size_t m = 0;
    for (char *q = tmp; *q; q++)
        if (*q >= '0' && *q <= '9') mant[m++] = *q;
    while (m > 1 && mant[m - 1] == '0') m--;
    if (x < 0) *p++ = '-';
    if (exp10 < -4 || exp10 >= 16) {
        *p++ = mant[0];
        if (m > 1) {
            *p++ = '.';
            memcpy(p, mant + 1, m - 1);
            p += m - 1;
        }
        return p + sprintf(p, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    }
    if (exp10 < 0) {
        *p++ = '0';
        *p++ = '.';
        for (int z = 0; z < -exp10 - 1; z++) *p++ = '0';
        memcpy(p, mant, m);
        return p + m;
    }
    for (int i = 0; i <= exp10; i++) *p++ = (size_t)i < m ? mant[i] : '0';
    *p++ = '.';
    if ((size_t)exp10 + 1 < m) {
        memcpy(p, mant + exp10 + 1, m - (size_t)exp10 - 1);
        return p + (m - (size_t)exp10 - 1);
    }
    *p++ = '0';
    return p;
}

/* "YYYY-MM-DDTHH:MM:SS.fffffffff" with a one-day cache of the date part. */
typedef struct day_cache {
    int64_t day;
    char text[11];
} day_cache;

static char *put2(char *p, unsigned v)
{
    p[0] = (char)('0' + v / 10);
    p[1] = (char)('0' + v % 10);
    return p + 2;
}

static char *put_ts(char *p, int64_t ns, day_cache *dc)
{
    int64_t secs = ns / 1000000000, frac = ns % 1000000000;
    if (frac < 0) {
        frac += 1000000000;
        secs--;
    }
    int64_t day = secs / 86400, sod = secs % 86400;
    if (sod < 0) {
        sod += 86400;
        day--;
    }
    if (day != dc->day) {
        int64_t y;
        unsigned m, d;
        shape_gen_civil_from_days(day, &y, &m, &d);
        char *q = dc->text;
        q = put2(q, (unsigned)(y / 100 % 100));
        q = put2(q, (unsigned)(y % 100));
        *q++ = '-';
        q = put2(q, m);
        *q++ = '-';
        put2(q, d);
        dc->day = day;
    }
    *p++ = '"';
    memcpy(p, dc->text, 10);
    p += 10;
    *p++ = 'T';
    p = put2(p, (unsigned)(sod / 3600));
    *p++ = ':';
    p = put2(p, (unsigned)(sod / 60 % 60));
    *p++ = ':';
    p = put2(p, (unsigned)(sod % 60));
    *p++ = '.';
    for (int i = 8; i >= 0; i--) {
        p[i] = (char)('0' + frac % 10);
        frac /= 10;
    }
    p += 9;
    *p++ = '"';
    return p;
}

static char *put_value(char *p, const shape_gen_value *v, day_cache *dc)
{
    switch (v->kind) {
    case SHAPE_GEN_NULL: memcpy(p, "null", 4); return p + 4;
    case SHAPE_GEN_INT64: return put_i64(p, v->v.i);
    case SHAPE_GEN_FLOAT64: return put_f64(p, v->v.f);
    case SHAPE_GEN_STRING: return put_str(p, v->v.s, v->len);
    case SHAPE_GEN_TIMESTAMP_NS: return put_ts(p, v->v.i, dc);
    case SHAPE_GEN_BOOL:
        if (v->v.b) {
            memcpy(p, "true", 4);
            return p + 4;
        }
        memcpy(p, "false", 5);
        return p + 5;
    }
    return p;
}

/* ---- the run ------------------------------------------------------------ */

typedef struct table_result {
    uint64_t events, bytes;
    double seconds;
} table_result;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run(shape_retail *d, out *o, table_result res[SHAPE_RETAIL_TABLES])
{
    shape_err err;
    shape_gen_row *row = malloc(sizeof *row);
    if (!row) return 1;
    day_cache dc = {INT64_MIN, ""};
    for (size_t t = 0; t < SHAPE_RETAIL_TABLES; t++) {
        shape_retail_table *tab;
        if (shape_retail_table_open_id(d, t, &tab, &err) != SHAPE_OK) {
            fprintf(stderr, "bench: %s\n", err.message);
            free(row);
            return 1;
        }
        /* Keys rendered once: "name": per column, and the event fields. */
        const shape_gen_column *cols;
        size_t ncols = shape_retail_columns(t, &cols);
        char keys[SHAPE_GEN_MAX_COLUMNS][64];
        size_t key_len[SHAPE_GEN_MAX_COLUMNS];
        for (size_t c = 0; c < ncols; c++)
            key_len[c] = (size_t)snprintf(keys[c], sizeof keys[c], "%s\"%s\":", c ? "," : "{",
                                          cols[c].name);
        char table_field[96];
        size_t table_len = (size_t)snprintf(table_field, sizeof table_field,
                                            ",\"_shape_table\":\"%s\",\"_shape_seq\":",
                                            shape_retail_table_name(t));
        int et = shape_retail_event_time_column(t);
        uint64_t rows = shape_retail_table_rows(tab), bytes0 = o->bytes + o->len;
        double t0 = now();
        for (uint64_t r = 0; r < rows; r++) {
            if (shape_retail_table_row(tab, r, row, &err) != SHAPE_OK) {
                fprintf(stderr, "bench: %s\n", err.message);
                shape_retail_table_close(tab);
                free(row);
                return 1;
            }
            if (o->len + MAX_EVENT > BUF_SIZE) flush(o);
            char *p = o->buf + o->len;
            for (size_t c = 0; c < ncols; c++) {
                memcpy(p, keys[c], key_len[c]);
                p = put_value(p + key_len[c], &row->values[c], &dc);
            }
            memcpy(p, table_field, table_len);
            p = put_u64(p + table_len, r);
            if (et >= 0) {
                memcpy(p, ",\"_shape_event_time\":", 21);
                p = put_value(p + 21, &row->values[et], &dc);
            }
            *p++ = '}';
            *p++ = '\n';
            o->len = (size_t)(p - o->buf);
        }
        res[t].seconds = now() - t0;
        res[t].events = rows;
        res[t].bytes = o->bytes + o->len - bytes0;
        shape_retail_table_close(tab);
    }
    flush(o);
    free(row);
    return 0;
}

int main(int argc, char **argv)
{
    const char *preset = argc > 1 ? argv[1] : "medium";
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 42;
    int repeat = argc > 3 ? atoi(argv[3]) : 3;
    int print = argc > 4 && strcmp(argv[4], "--print") == 0;
    if (repeat < 1) repeat = 1;
    shape_err err;
    shape_retail *d;
    double t_open = now();
    if (shape_retail_open(preset, seed, &d, &err) != SHAPE_OK) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 2;
    }
    t_open = now() - t_open;
    out o = {malloc(BUF_SIZE), 0, 0, 0, print};
    if (!o.buf) return 2;
    table_result best[SHAPE_RETAIL_TABLES], cur[SHAPE_RETAIL_TABLES];
    double best_total = 0;
    for (int i = 0; i < repeat; i++) {
        o.bytes = 0;
        if (run(d, &o, cur) != 0) return 2;
        double total = 0;
        for (size_t t = 0; t < SHAPE_RETAIL_TABLES; t++) total += cur[t].seconds;
        if (i == 0 || total < best_total) {
            best_total = total;
            memcpy(best, cur, sizeof best);
        }
        if (print) break;
    }
    if (print) {
        fflush(stdout);
        shape_retail_close(d);
        free(o.buf);
        return 0;
    }
    uint64_t events = 0, bytes = 0;
    printf("retail %s seed %llu: domain opened in %.1f ms; best of %d run(s), one core\n", preset,
           (unsigned long long)seed, t_open * 1e3, repeat);
    printf("%-17s %12s %9s %12s %9s %7s\n", "table", "events", "ms", "events/s", "MB/s", "B/event");
    for (size_t t = 0; t < SHAPE_RETAIL_TABLES; t++) {
        table_result *r = &best[t];
        events += r->events;
        bytes += r->bytes;
        printf("%-17s %12llu %9.1f %12.0f %9.1f %7.1f\n", shape_retail_table_name(t),
               (unsigned long long)r->events, r->seconds * 1e3,
               r->seconds > 0 ? (double)r->events / r->seconds : 0.0,
               r->seconds > 0 ? (double)r->bytes / r->seconds / 1e6 : 0.0,
               r->events ? (double)r->bytes / (double)r->events : 0.0);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%-17s %12llu %9.1f %12.0f %9.1f %7.1f\n", "total", (unsigned long long)events,
           best_total * 1e3, (double)events / best_total, (double)bytes / best_total / 1e6,
           (double)bytes / (double)events);
    printf("peak RSS %.1f MB (checksum %016llx)\n", (double)ru.ru_maxrss / 1024.0,
           (unsigned long long)o.checksum);
    shape_retail_close(d);
    free(o.buf);
    return 0;
}
