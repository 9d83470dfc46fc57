/* retail_internal.h — the retail domain's shared state, seen by retail.c (open,
 * metadata) and retail_rows.c (row generation). Internal to libshape.
 */
#ifndef SHAPE_RETAIL_INTERNAL_H
#define SHAPE_RETAIL_INTERNAL_H

#include "shape/generate.h"
#include "shape/generate_retail.h"

#define RETAIL_HIDDEN __attribute__((visibility("hidden")))

/* Roots of the 3-level product_category hierarchy. */
#define RETAIL_CATEGORY_ROOTS 8
/* Resolution of the customer tenure posterior (cells over the date range). */
#define RETAIL_TENURE_CELLS 32

/* Every row-addressed stream of the domain: one per (table, column, label). */
enum retail_stream {
    RS_CUSTOMER_FIRST,
    RS_CUSTOMER_LAST,
    RS_CUSTOMER_EMAIL_NULL,
    RS_CUSTOMER_EMAIL_NUMBER,
    RS_CUSTOMER_EMAIL_DOMAIN,
    RS_CUSTOMER_GENDER,
    RS_CUSTOMER_LOYALTY,
    RS_CUSTOMER_SIGNUP,
    RS_CUSTOMER_ACTIVE,
    RS_ADDRESS_OWNER_PERM,
    RS_ADDRESS_TYPE,
    RS_ADDRESS_STREET_NUMBER,
    RS_ADDRESS_STREET_NAME,
    RS_ADDRESS_STREET_SUFFIX,
    RS_ADDRESS_PLACE,
    RS_CATEGORY_NAME_PERM,
    RS_CATEGORY_PARENT,
    RS_PRODUCT_CATEGORY,
    RS_PRODUCT_QUALIFIER,
    RS_PRODUCT_ITEM,
    RS_PRODUCT_PRICE,
    RS_PRODUCT_STATUS,
    RS_PRODUCT_COST,
    RS_PRODUCT_COST_FIX,
    RS_PROMO_NAME,
    RS_PROMO_TYPE,
    RS_PROMO_DISCOUNT,
    RS_PROMO_START,
    RS_PROMO_DAYS,
    RS_STORE_TYPE,
    RS_STORE_PLACE,
    RS_ORDER_SLOT_PERM,
    RS_ORDER_OWNER_PERM,
    RS_ORDER_STORE_ZIPF,
    RS_ORDER_STORE_PERM,
    RS_ORDER_SHIP_PICK,
    RS_ORDER_PROMO_NULL,
    RS_ORDER_PROMO_FK,
    RS_ORDER_DATE,
    RS_ORDER_STATUS,
    RS_LINE_OWNER_PERM,
    RS_LINE_PRODUCT_ZIPF,
    RS_LINE_PRODUCT_PERM,
    RS_LINE_QUANTITY,
    RS_RETURN_ORDER,
    RS_RETURN_REASON,
    RS_RETURN_REFUND,
    RS_RETURN_REFUND_FIX,
    RS_RETURN_DAYS,
    /* the timeline variant's own draws (docs/EMIT.md "Event-time order") */
    RS_TL_SIGNUP,
    RS_TL_ADDRESS_CHUNK,
    RS_TL_ORDER_DATE,
    RS_TL_ORDER_CUSTOMER,
    RS_TL_LINE_CHUNK,
    RS_TL_RETURN_DATE,
    RS_TL_RETURN_ORDER,
    RS_COUNT
};

/* The timeline's parent → rank map: parent ids cut into chunks of `size`
 * (the allocation's block, ~4,096 to 8,191 parents); inside a chunk the id
 * goes through a rotation drawn per chunk and a keyed permutation, so a
 * parent's children are one allocation run found in O(1) both ways, and the
 * children of the first m parents are one run start plus at most one
 * chunk's sum. */
typedef struct retail_chunks {
    uint64_t n, size;        /* parents; chunk size (the last one may be short) */
    shape_gen_perm full, last; /* over `size`, over the last chunk's length */
    shape_gen_stream rot;
} retail_chunks;

struct shape_retail {
    const char *preset; /* static */
    uint64_t seed;
    int timeline; /* 1: the event-time variant (shape_retail_open_timeline) */
    retail_chunks address_chunks, line_chunks; /* timeline: customers, orders → ranks */
    int64_t first_order_ns;                    /* timeline: order 0's date */
    uint64_t rows[SHAPE_RETAIL_TABLES];
    int64_t range_start_ns, range_end_ns; /* [2022-01-01, 2026-01-01) UTC */
    uint32_t orders_cap;                  /* most orders one customer may have */
    /* P(tenure cell <= j | k orders), row k: a customer's signup is drawn
     * from it given its allocated order count (see retail.c). */
    double tenure_cdf[(SHAPE_GEN_ALLOC_MAX_K + 1) * RETAIL_TENURE_CELLS];
    shape_gen_stream st[RS_COUNT];
    shape_gen_alias gender, loyalty, active, address_type, product_status, promo_type,
        promo_discount, store_type, order_status, return_reason;
    shape_gen_alias quantity; /* Geometric(0.6) on 1.., clipped to 20, as 20 weights */
    shape_gen_zipf store_zipf, product_zipf;
    shape_gen_perm category_perm, store_perm, product_perm;
    shape_gen_perm address_owner; /* address rank → customer */
    shape_gen_perm order_owner;   /* order-allocation rank → customer */
    shape_gen_perm order_slot;    /* order row → order-allocation slot */
    shape_gen_perm line_owner;    /* line-allocation rank → order */
    shape_gen_alloc addresses;    /* customers → addresses (address row = slot) */
    shape_gen_alloc orders;       /* customers → order slots */
    shape_gen_alloc lines;        /* orders → order lines (line row = slot) */
    shape_gen_seasonal season;
    /* Zipf rank → id for the table head (pure functions of the perms above,
     * precomputed because the head takes most draws). */
    uint32_t store_of_rank[SHAPE_GEN_ZIPF_HEAD];
    uint32_t product_of_rank[SHAPE_GEN_ZIPF_HEAD];
};

/* A small direct-mapped cache of product unit prices (pure values, so a
 * cache can never change a result; it only saves the log-normal draw for
 * the Zipf-heavy products). */
#define RETAIL_PRICE_CACHE 1024

struct shape_retail_table {
    shape_retail *d;
    size_t id;
    /* order_line: the allocation run of the last row, and its order. */
    int have_run;
    shape_gen_alloc_run run;
    uint64_t line_order;     /* UINT64_MAX when none cached */
    int64_t line_promo;      /* promotion row or -1 */
    double line_discount;
    uint64_t price_key[RETAIL_PRICE_CACHE];
    double price_val[RETAIL_PRICE_CACHE];
};

/* Row generation (retail_rows.c). */
RETAIL_HIDDEN int shape_retail_fill_row(shape_retail_table *t, uint64_t row, shape_gen_row *out);

/* Timeline (retail_rows.c): the rank of parent id `id` and back. */
RETAIL_HIDDEN uint64_t retail_chunk_rank(const retail_chunks *c, uint64_t id);
RETAIL_HIDDEN uint64_t retail_chunk_id(const retail_chunks *c, uint64_t rank);
/* Timeline: the event time of row `row` of a timed table. */
RETAIL_HIDDEN int64_t retail_timeline_time(const shape_retail *d, size_t table, uint64_t row);
/* Timeline: the children of the first m parents (m <= parents). */
RETAIL_HIDDEN uint64_t retail_children_before(const shape_gen_alloc *a, const retail_chunks *c, uint64_t m);

#endif
