/* schedule.c — the rate schedule of a paced emit: bursts, ramps, the daily
 * curve (built-in or a shape-rate-curve file) and Poisson gaps (see
 * shape/emit_schedule.h for the contract).
 *
 * Why: the sender keeps absolute deadlines; a shaped schedule must give the
 * exact time event n is due, integrated from the piecewise rate, so that the
 * per-second counts a consumer sees follow the shape without drift.
 * How: run time is cut at every breakpoint (burst and ramp edges, curve
 * points); inside a segment the multiplier is burst × ramp × curve with the
 * burst constant and the other two linear, so the count is a cubic of the
 * time into the segment, integrated in closed form and inverted by
 * bisection (monotone: the rate is never negative). A cursor keeps the last
 * segment start and the count there, so the sender's ascending questions do
 * not walk from 0 every time. No clock is read here.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shape/emit_schedule.h"
#include "shape/generate.h"

/* ---- parsing the options ------------------------------------------------------- */

/* n numbers separated by ':' (finite, whole tokens); 0 or -1. */
static int parse_fields(const char *text, double *out, size_t n)
{
    const char *p = text;
    for (size_t i = 0; i < n; i++) {
        char *end;
        errno = 0;
        out[i] = strtod(p, &end);
        if (end == p || errno != 0 || !isfinite(out[i])) return -1;
        if (i + 1 < n ? *end != ':' : *end != 0) return -1;
        p = end + 1;
    }
    return 0;
}

/* A multiplier is 0 or within [SHAPE_SCHEDULE_MIN_MULT, SHAPE_SCHEDULE_MAX_MULT]. */
static int multiplier_ok(double m)
{
    return m == 0 || (m >= SHAPE_SCHEDULE_MIN_MULT && m <= SHAPE_SCHEDULE_MAX_MULT);
}

int shape_emit_burst_parse(const char *text, shape_emit_burst *out, shape_err *err)
{
    double f[3];
    if (parse_fields(text, f, 3) != 0)
        return shape_err_set(err, SHAPE_EINVAL, "--burst wants START:DURATION:MULT (seconds, seconds, factor), got '%.60s'",
                             text);
    if (f[0] < 0 || f[1] <= 0 || !multiplier_ok(f[2]) || f[2] == 0)
        return shape_err_set(err, SHAPE_EINVAL, "--burst '%.60s': START must be >= 0, DURATION > 0, MULT in [1e-6, 1e6]",
                             text);
    *out = (shape_emit_burst){f[0], f[1], f[2]};
    return SHAPE_OK;
}

int shape_emit_ramp_parse(const char *text, shape_emit_ramp *out, shape_err *err)
{
    double f[4];
    if (parse_fields(text, f, 4) != 0)
        return shape_err_set(err, SHAPE_EINVAL, "--ramp wants START:DURATION:FROM:TO (seconds, seconds, factors), got '%.60s'",
                             text);
    if (f[0] < 0 || f[1] <= 0 || !multiplier_ok(f[2]) || !multiplier_ok(f[3]))
        return shape_err_set(err, SHAPE_EINVAL,
                             "--ramp '%.60s': START must be >= 0, DURATION > 0, FROM and TO 0 or in [1e-6, 1e6]",
                             text);
    *out = (shape_emit_ramp){f[0], f[1], f[2], f[3]};
    return SHAPE_OK;
}

static int by_burst_start(const void *a, const void *b)
{
    double x = ((const shape_emit_burst *)a)->start, y = ((const shape_emit_burst *)b)->start;
    return (x > y) - (x < y);
}

static int by_ramp_start(const void *a, const void *b)
{
    double x = ((const shape_emit_ramp *)a)->start, y = ((const shape_emit_ramp *)b)->start;
    return (x > y) - (x < y);
}

int shape_emit_schedule_check(shape_emit_schedule *s, shape_err *err)
{
    if (!isfinite(s->rate) || s->rate <= 0)
        return shape_err_set(err, SHAPE_EINVAL, "--rate must be a finite number > 0");
    if (s->nbursts > SHAPE_SCHEDULE_MAX_SHAPES || s->nramps > SHAPE_SCHEDULE_MAX_SHAPES)
        return shape_err_set(err, SHAPE_EINVAL, "at most %d --burst and %d --ramp options", SHAPE_SCHEDULE_MAX_SHAPES,
                             SHAPE_SCHEDULE_MAX_SHAPES);
    qsort(s->bursts, s->nbursts, sizeof *s->bursts, by_burst_start);
    qsort(s->ramps, s->nramps, sizeof *s->ramps, by_ramp_start);
    for (size_t i = 1; i < s->nbursts; i++) {
        const shape_emit_burst *a = &s->bursts[i - 1], *b = &s->bursts[i];
        if (b->start < a->start + a->duration)
            return shape_err_set(err, SHAPE_EINVAL, "--burst %g:%g:%g overlaps --burst %g:%g:%g", a->start, a->duration,
                                 a->mult, b->start, b->duration, b->mult);
    }
    for (size_t i = 1; i < s->nramps; i++) {
        const shape_emit_ramp *a = &s->ramps[i - 1], *b = &s->ramps[i];
        if (b->start < a->start + a->duration)
            return shape_err_set(err, SHAPE_EINVAL, "--ramp %g:%g:%g:%g overlaps --ramp %g:%g:%g:%g", a->start,
                                 a->duration, a->from, a->to, b->start, b->duration, b->from, b->to);
    }
    if (s->nramps && s->ramps[s->nramps - 1].to == 0)
        return shape_err_set(err, SHAPE_EINVAL,
                             "the last --ramp ends at 0, which would stop the stream for good; end it above 0");
    return SHAPE_OK;
}

int shape_emit_schedule_is_constant(const shape_emit_schedule *s)
{
    return !s->poisson && s->nbursts == 0 && s->nramps == 0 && !s->curve;
}

/* ---- the piecewise rate ---------------------------------------------------------- */

/* floor and the time of day without libm (libshape does not link it: the
 * generator's math is its own, shape/generate.h). */
static double floor_of(double x)
{
    if (!(x > -4503599627370496.0 && x < 4503599627370496.0)) return x; /* |x| >= 2^52: already whole */
    double t = (double)(int64_t)x;
    return t > x ? t - 1 : t;
}

static double time_of_day(double t) { return t - floor_of(t / SHAPE_DAY_SECONDS) * SHAPE_DAY_SECONDS; }

/* The curve's piece around time of day `tod`: value at tod and slope. */
static void curve_piece(const shape_rate_curve *c, double tod, double *value, double *slope)
{
    if (c->n == 1) {
        *value = c->m[0];
        *slope = 0;
        return;
    }
    tod = time_of_day(tod);
    size_t i = 0;
    while (i + 1 < c->n && c->t[i + 1] <= tod) i++;
    double t0, m0, t1, m1;
    if (tod < c->t[0]) { /* before the first point: from the last one, a day earlier */
        t0 = c->t[c->n - 1] - SHAPE_DAY_SECONDS, m0 = c->m[c->n - 1], t1 = c->t[0], m1 = c->m[0];
    } else if (i + 1 < c->n) {
        t0 = c->t[i], m0 = c->m[i], t1 = c->t[i + 1], m1 = c->m[i + 1];
    } else { /* after the last point: to the first one, a day later */
        t0 = c->t[i], m0 = c->m[i], t1 = c->t[0] + SHAPE_DAY_SECONDS, m1 = c->m[0];
    }
    *slope = (m1 - m0) / (t1 - t0);
    *value = m0 + *slope * (tod - t0);
}

double shape_rate_curve_at(const shape_rate_curve *c, double tod)
{
    double v, slope;
    curve_piece(c, tod, &v, &slope);
    return v;
}

/* The next breakpoint after run time a (INFINITY when none). */
static double next_break(const shape_emit_schedule *s, double a)
{
    double b = INFINITY;
    for (size_t i = 0; i < s->nbursts; i++) {
        double e[2] = {s->bursts[i].start, s->bursts[i].start + s->bursts[i].duration};
        for (int j = 0; j < 2; j++)
            if (e[j] > a && e[j] < b) b = e[j];
    }
    for (size_t i = 0; i < s->nramps; i++) {
        double e[2] = {s->ramps[i].start, s->ramps[i].start + s->ramps[i].duration};
        for (int j = 0; j < 2; j++)
            if (e[j] > a && e[j] < b) b = e[j];
    }
    if (s->curve && s->curve->n > 1) {
        double tod = time_of_day(s->curve_start + a), next = s->curve->t[0] + SHAPE_DAY_SECONDS;
        for (size_t i = 0; i < s->curve->n; i++)
            if (s->curve->t[i] > tod + 1e-9) {
                next = s->curve->t[i];
                break;
            }
        double c = a + (next - tod);
        if (c < b) b = c;
    }
    return b;
}

/* The multiplier over the segment [a, b) as burst × (r0 + r1·u) × (c0 + c1·u),
 * u = t − a. */
typedef struct piece {
    double burst, r0, r1, c0, c1;
} piece;

static piece piece_at(const shape_emit_schedule *s, double a, double b)
{
    double mid = isfinite(b) ? (a + b) / 2 : a + 1;
    piece p = {1, 1, 0, 1, 0};
    for (size_t i = 0; i < s->nbursts; i++)
        if (mid >= s->bursts[i].start && mid < s->bursts[i].start + s->bursts[i].duration) p.burst = s->bursts[i].mult;
    for (size_t i = 0; i < s->nramps; i++) {
        const shape_emit_ramp *r = &s->ramps[i];
        if (mid >= r->start + r->duration) {
            p.r0 = r->to; /* held after the ramp (ramps are sorted) */
        } else if (mid >= r->start) {
            p.r1 = (r->to - r->from) / r->duration;
            p.r0 = r->from + p.r1 * (a - r->start);
        }
    }
    if (s->curve) {
        double v, slope;
        curve_piece(s->curve, s->curve_start + mid, &v, &slope);
        p.c1 = slope;
        p.c0 = v - slope * (mid - a);
    }
    return p;
}

/* Events due over the first x seconds of a piece. */
static double piece_integral(const shape_emit_schedule *s, const piece *p, double x)
{
    double q0 = p->r0 * p->c0, q1 = p->r0 * p->c1 + p->r1 * p->c0, q2 = p->r1 * p->c1;
    double v = s->rate * p->burst * (q0 * x + q1 * x * x / 2 + q2 * x * x * x / 3);
    return v > 0 ? v : 0;
}

double shape_emit_schedule_rate_at(const shape_emit_schedule *s, double t)
{
    double b = next_break(s, t);
    piece p = piece_at(s, t, b);
    return s->rate * p.burst * p.r0 * p.c0;
}

static double count_between(const shape_emit_schedule *s, double t0, double t1);

double shape_emit_schedule_count(const shape_emit_schedule *s, double t)
{
    if (s->nbursts == 0 && s->nramps == 0 && !s->curve) return t * s->rate;
    return count_between(s, 0, t);
}

/* Run time after which no burst or ramp edge is left. */
static double shapes_end(const shape_emit_schedule *s)
{
    double e = 0;
    for (size_t i = 0; i < s->nbursts; i++)
        if (s->bursts[i].start + s->bursts[i].duration > e) e = s->bursts[i].start + s->bursts[i].duration;
    for (size_t i = 0; i < s->nramps; i++)
        if (s->ramps[i].start + s->ramps[i].duration > e) e = s->ramps[i].start + s->ramps[i].duration;
    return e;
}

/* Events due between run times t0 and t1. */
static double count_between(const shape_emit_schedule *s, double t0, double t1)
{
    double a = t0, count = 0;
    while (a < t1) {
        double b = next_break(s, a), e = b < t1 ? b : t1;
        piece p = piece_at(s, a, b);
        count += piece_integral(s, &p, e - a);
        a = b;
    }
    return count;
}

/* x in [0, len] with piece_integral(x) = want (bisection; the integral is
 * monotone in x). */
static double piece_invert(const shape_emit_schedule *s, const piece *p, double len, double want)
{
    double lo = 0, hi = len;
    for (int i = 0; i < 200; i++) { /* to full double precision: a huge rate magnifies any slack */
        double mid = lo + (hi - lo) / 2;
        if (mid <= lo || mid >= hi) break;
        if (piece_integral(s, p, mid) < want) lo = mid;
        else hi = mid;
    }
    return hi;
}

double shape_emit_schedule_due(const shape_emit_schedule *s, shape_schedule_cursor *c, double count)
{
    if (count <= 0) return 0;
    if (s->nbursts == 0 && s->nramps == 0 && !s->curve) return count / s->rate;
    shape_schedule_cursor local = {0, 0};
    if (!c || c->count > count) c = &local, c->t = 0, c->count = 0;
    double a = c->t, have = c->count;
    const double last_edge = shapes_end(s);
    for (long guard = 0; guard < 100000000L; guard++) {
        if (s->curve && a >= last_edge) { /* only the curve is left: skip whole days */
            double day = count_between(s, a, a + SHAPE_DAY_SECONDS);
            if (!(day > 0)) return INFINITY;
            double days = floor_of((count - have) / day);
            if (days >= 1) {
                a += days * SHAPE_DAY_SECONDS;
                have += days * day;
            }
        }
        double b = next_break(s, a);
        piece p = piece_at(s, a, b);
        if (!isfinite(b)) {
            double r = s->rate * p.burst * p.r0 * p.c0;
            return r > 0 ? a + (count - have) / r : INFINITY;
        }
        double in = piece_integral(s, &p, b - a);
        if (have + in >= count) return a + piece_invert(s, &p, b - a, count - have);
        have += in;
        a = b;
        c->t = a;
        c->count = have;
    }
    return INFINITY;
}

/* ---- Poisson gaps ------------------------------------------------------------------ */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double shape_emit_arrival_gap(uint64_t seed, uint64_t position)
{
    uint64_t h = mix64(mix64(seed ^ 0x6172726976616c73ULL /* "arrivals" */) + position * 0x9e3779b97f4a7c15ULL);
    double u = (double)(h >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
    return -shape_gen_log(1.0 - u);
}

/* ---- daily curves ------------------------------------------------------------------- */

int shape_rate_curve_builtin(const char *name, shape_rate_curve *out, shape_err *err)
{
    /* business-hours: quiet at night, rising from 06:00 to a 09:00-17:00
     * plateau with a lunch peak, easing off in the evening (mean ≈ 1) */
    static const double bh_t[] = {0, 6 * 3600, 9 * 3600, 12 * 3600, 13 * 3600, 17 * 3600, 20 * 3600, 23 * 3600};
    static const double bh_m[] = {0.2, 0.3, 1.6, 1.9, 1.7, 1.5, 0.8, 0.3};
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    if (strcmp(name, "flat") == 0) {
        out->n = 1;
        out->m[0] = 1;
        return SHAPE_OK;
    }
    if (strcmp(name, "business-hours") == 0) {
        out->n = sizeof bh_t / sizeof bh_t[0];
        memcpy(out->t, bh_t, sizeof bh_t);
        memcpy(out->m, bh_m, sizeof bh_m);
        return SHAPE_OK;
    }
    return shape_err_set(err, SHAPE_ENOTFOUND, "unknown daily curve '%.60s'", name);
}

double shape_emit_time_of_day(const char *s)
{
    int h, m, sec = 0, used = 0;
    size_t len = strlen(s);
    if (len == 5 && sscanf(s, "%2d:%2d%n", &h, &m, &used) == 2 && used == 5) {
    } else if (len == 8 && sscanf(s, "%2d:%2d:%2d%n", &h, &m, &sec, &used) == 3 && used == 8) {
    } else {
        return -1;
    }
    if (h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 59) return -1;
    return h * 3600.0 + m * 60.0 + sec;
}

/* The points of a curve document into out (sorted, checked). */
static int curve_points(const json_t *points, const char *what, shape_rate_curve *out, shape_err *err)
{
    size_t n = json_array_size(points);
    if (!json_is_array(points) || n == 0)
        return shape_err_set(err, SHAPE_EINVAL, "rate curve %s: \"points\" must be a non-empty array", what);
    if (n > SHAPE_RATE_CURVE_MAX_POINTS)
        return shape_err_set(err, SHAPE_EINVAL, "rate curve %s: at most %d points", what, SHAPE_RATE_CURVE_MAX_POINTS);
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *pt = json_array_get(points, i);
        const char *tod = json_string_value(json_array_get(pt, 0));
        const json_t *mult = json_array_get(pt, 1);
        double t = tod ? shape_emit_time_of_day(tod) : -1, m = json_number_value(mult);
        if (json_array_size(pt) != 2 || t < 0 || !json_is_number(mult) || !multiplier_ok(m))
            return shape_err_set(err, SHAPE_EINVAL,
                                 "rate curve %s: point %zu must be [\"HH:MM[:SS]\", multiplier 0 or in [1e-6, 1e6]]", what,
                                 i + 1);
        size_t j = out->n;
        while (j > 0 && out->t[j - 1] > t) {
            out->t[j] = out->t[j - 1];
            out->m[j] = out->m[j - 1];
            j--;
        }
        if (j > 0 && out->t[j - 1] == t)
            return shape_err_set(err, SHAPE_EINVAL, "rate curve %s: two points at %s", what, tod);
        out->t[j] = t;
        out->m[j] = m;
        out->n++;
        any |= m > 0;
    }
    if (!any) return shape_err_set(err, SHAPE_EINVAL, "rate curve %s: every multiplier is 0", what);
    return SHAPE_OK;
}

int shape_rate_curve_parse(const char *text, size_t len, const char *what, shape_rate_curve *out, shape_err *err)
{
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return shape_err_set(err, SHAPE_EINVAL, "rate curve %s is not a JSON object", what);
    }
    int rc = SHAPE_OK;
    const char *key;
    json_t *v;
    json_object_foreach(doc, key, v)
    {
        if (strcmp(key, "format") && strcmp(key, "version") && strcmp(key, "points") && strcmp(key, "name") &&
            strcmp(key, "description")) {
            rc = shape_err_set(err, SHAPE_EINVAL, "rate curve %s: unknown key '%.40s'", what, key);
            break;
        }
    }
    const char *format = json_string_value(json_object_get(doc, "format"));
    json_t *version = json_object_get(doc, "version");
    if (rc == SHAPE_OK && (!format || strcmp(format, "shape-rate-curve") != 0))
        rc = shape_err_set(err, SHAPE_EINVAL, "%s is not a rate curve (\"format\" must be \"shape-rate-curve\")", what);
    if (rc == SHAPE_OK && (!json_is_integer(version) || json_integer_value(version) < 1))
        rc = shape_err_set(err, SHAPE_EINVAL, "rate curve %s: \"version\" must be 1", what);
    if (rc == SHAPE_OK && json_integer_value(version) > 1)
        rc = shape_err_set(err, SHAPE_EINVAL, "rate curve %s has version %lld, newer than this shape reads (1)", what,
                           (long long)json_integer_value(version));
    if (rc == SHAPE_OK) rc = curve_points(json_object_get(doc, "points"), what, out, err);
    const char *name = json_string_value(json_object_get(doc, "name"));
    if (rc == SHAPE_OK) snprintf(out->name, sizeof out->name, "%s", name ? name : what);
    json_decref(doc);
    return rc;
}

int shape_rate_curve_load(const char *path, shape_rate_curve *out, shape_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return shape_err_set(err, SHAPE_EINVAL, "cannot read rate curve %s: %s", path, strerror(errno));
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, 1 << 20, f) : 0;
    int big = buf && n == (1 << 20);
    fclose(f);
    if (!buf) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    int rc = big ? shape_err_set(err, SHAPE_EINVAL, "rate curve %s is larger than 1 MB", path)
                 : shape_rate_curve_parse(buf, n, path, out, err);
    free(buf);
    return rc;
}
