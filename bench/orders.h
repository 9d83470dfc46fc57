/* bench/orders.h — the retail-order-like JSON documents every benchmark uses.
 *
 * Why: the decode, consume and profile benchmarks must all measure the same
 * bytes, for us and for every peer (jansson, kcat, Python), so the documents
 * come from one deterministic generator instead of each program's own.
 * How: a splitmix64 stream, seeded per run, renders document i as one JSON
 * object of about 200 bytes (no trailing newline): order_id, customer_id,
 * one in four with a customer name (some with escapes or UTF-8), an ISO-8601
 * order_date, status, order_total, channel, promotion_id (null two times in
 * three) and items, an array of one or two objects — the same shape as
 * bench/json_parse.c. Header-only (static functions), no global state: the
 * caller owns the orders_rng.
 */
#ifndef BENCH_ORDERS_H
#define BENCH_ORDERS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ORDERS_MAX_DOC 1024 /* a document is never longer than this */

typedef struct orders_rng {
    uint64_t state;
} orders_rng;

static inline void orders_seed(orders_rng *r, uint64_t seed) { r->state = 0x9E3779B97F4A7C15ull ^ seed; }

static inline uint64_t orders_next(orders_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline unsigned orders_n(orders_rng *r, unsigned n) { return (unsigned)(orders_next(r) % n); }

/* Render document number i into w (at least ORDERS_MAX_DOC bytes); returns
 * its length. No newline, no NUL counted. */
static inline size_t orders_doc(orders_rng *r, uint64_t i, char *w)
{
    static const char *const statuses[] = {"placed", "paid", "shipped", "delivered", "returned", "cancelled"};
    static const char *const channels[] = {"web", "mobile", "store", "phone"};
    static const char *const names[] = {"Ana Silva", "Jos\\u00e9 Garc\\u00eda", "Zo\xc3\xab M\xc3\xbcller",
                                        "Li Wei", "Sam O'Neil", "Fran\\u00e7ois \\\"Frank\\\" Roy"};
    char items[256];
    size_t il = 0;
    unsigned nitems = 1 + orders_n(r, 2);
    for (unsigned k = 0; k < nitems; k++) {
        unsigned sku = orders_n(r, 10000), qty = 1 + orders_n(r, 5), pi = orders_n(r, 300), pf = orders_n(r, 100);
        il += (size_t)snprintf(items + il, sizeof items - il, "%s{\"sku\":\"A%u\",\"qty\":%u,\"price\":%u.%02u}",
                               k ? "," : "", sku, qty, pi, pf);
    }
    char name[64] = "";
    if (orders_n(r, 4) == 0) snprintf(name, sizeof name, "\"customer\":\"%s\",", names[orders_n(r, 6)]);
    char promo[24];
    if (orders_n(r, 3) == 0) snprintf(promo, sizeof promo, "%u", orders_n(r, 500));
    else strcpy(promo, "null");
    unsigned cust = orders_n(r, 100000), mo = 1 + orders_n(r, 12), dd = 1 + orders_n(r, 28), hh = orders_n(r, 24),
             mi = orders_n(r, 60), ss = orders_n(r, 60), us = orders_n(r, 1000000);
    const char *st = statuses[orders_n(r, 6)];
    unsigned ti = orders_n(r, 2000), tf = orders_n(r, 100);
    const char *ch = channels[orders_n(r, 4)];
    int n = snprintf(w, ORDERS_MAX_DOC,
                     "{\"order_id\":%llu,\"customer_id\":%u,%s\"order_date\":\"2024-%02u-%02uT%02u:%02u:%02u.%06uZ\","
                     "\"status\":\"%s\",\"order_total\":%u.%02u,\"channel\":\"%s\",\"promotion_id\":%s,"
                     "\"items\":[%s]}",
                     (unsigned long long)(1000000 + i), cust, name, mo, dd, hh, mi, ss, us, st, ti, tf, ch, promo,
                     items);
    return (size_t)n;
}

#endif
