/* schema_internal.h — the loaded form of a generation schema, shared by the
 * loader (schema_load.c), the formula compiler (schema_expr.c), the row
 * evaluator (schema_eval.c) and the domain adapter (schema_domain.c).
 *
 * A schema is loaded and validated whole into these plain structs; after
 * that it is read-only, so one loaded schema serves every thread. Every
 * value of every row is computed from (seed, table, column, row) by
 * sc_eval_column: a column that reads another table (a foreign key's target
 * key, a lookup, a computed total over children) recomputes the rows it
 * reads instead of looking them up in stored tables.
 */
#ifndef SHAPE_SCHEMA_INTERNAL_H
#define SHAPE_SCHEMA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "shape/domain.h"
#include "shape/error.h"
#include "shape/generate.h"

/* libm-free rounding helpers (the generator core links no libm, so output
 * never depends on the machine's math library). */
static inline double sc_floor(double x)
{
    if (!(x > -4503599627370496.0 && x < 4503599627370496.0)) return x; /* already integral, or NaN */
    double t = (double)(int64_t)x;
    return t > x ? t - 1.0 : t;
}
static inline double sc_ceil(double x) { return -sc_floor(-x); }
static inline double sc_fabs(double x) { return x < 0 ? -x : x; }
static inline double sc_fmod(double a, double b) { return a - (double)(int64_t)(a / b) * b; }

#define SC_MAX_TABLES 64
#define SC_MAX_PRESETS 16
#define SC_SCHEMA_MAX_BYTES (64u << 20) /* a schema document */
#define SC_COLUMN_PAD 88 /* sc_column's size to an odd number of cache lines (see below it) */
#define SC_MAX_DEPTH 24 /* nested row evaluations (a total over children over grandchildren ...) */

enum sc_strategy {
    SC_NONE = 0,
    SC_SEQUENCE,
    SC_UUID,
    SC_CONSTANT,
    SC_CHOICE,
    SC_WEIGHTED_ENUM,
    SC_LIFECYCLE,
    SC_PATTERN,
    SC_DISTRIBUTION,
    SC_TEMPORAL,
    SC_FOREIGN_KEY,
    SC_LOOKUP,
    SC_DERIVED,
    SC_CORRELATED,
    SC_FORMULA,
    SC_CONDITIONAL,
    SC_FIRST_PER_PARENT,
    SC_COMPUTED,
    SC_SELF_REFERENCING,
    SC_SELF_REF_FIELD,
    SC_REFERENCE_DATA,
    SC_RECORD_SAMPLE,
    SC_RECORD_FIELD,
    SC_NATIVE, /* native / faker: the built-in pools of names and places */
    SC_EMPIRICAL,
    SC_CONDITIONAL_TABLE,
    SC_COMPOSITE_FK_FIELD,
    SC_SCD2,
    /* schema_strat.c */
    SC_HIERARCHY,
    SC_HIERARCHY_FIELD,
    SC_BOOTSTRAP,
    SC_ADDRESS,
};

enum sc_scd2_role { SC_SCD_FROM, SC_SCD_TO, SC_SCD_CURRENT, SC_SCD_VERSION };
enum sc_fan_shape { SC_FAN_NONE, SC_FAN_POWER, SC_FAN_TWO_TIER };

enum sc_provider {
    SC_P_FIRST_NAME, SC_P_LAST_NAME, SC_P_NAME, SC_P_EMAIL, SC_P_PHONE, SC_P_STREET, SC_P_CITY, SC_P_STATE,
    SC_P_POSTCODE, SC_P_ZIP4, SC_P_IPV4, SC_P_URI, SC_P_WORD, SC_P_DIGITS, SC_P_PYSTR, SC_P_COMPANY, SC_P_SSN,
};

enum sc_dist_family {
    SC_D_UNIFORM,
    SC_D_NORMAL,
    SC_D_LOGNORMAL,
    SC_D_EXPONENTIAL,
    SC_D_PARETO,
    SC_D_ZIPF,
    SC_D_GEOMETRIC,
    SC_D_POISSON,
    SC_D_BERNOULLI,
    SC_D_TRIANGULAR,
};

enum sc_fk_mode { SC_FK_UNIFORM, SC_FK_ZIPF, SC_FK_PARETO };

enum sc_computed_rule { SC_SUM, SC_COUNT, SC_AVG, SC_MIN, SC_MAX };

/* A formula node (schema_expr.c). */
typedef struct sc_node {
    int op;      /* enum in schema_expr.c */
    int a, b, c; /* child node indices, or -1 */
    double num;  /* constant */
    int col;     /* column index (evaluation order) */
    int nargs;
    int args[8];
} sc_node;

/* One instruction of a formula's flat (post-order) program. */
typedef struct sc_ins {
    int op, nargs, col;
    double num;
} sc_ins;

/* One instruction of a formula's register form (schema_expr.c: X_* ops on
 * registers and constants). */
typedef struct sc_rins {
    uint8_t op, fn, nargs, d, a, b;
} sc_rins;

#define SC_EXPR_REGS 64

typedef struct sc_expr {
    sc_node *nodes;
    int nnodes, root;
    sc_ins *prog; /* the tree in post order, or NULL (short-circuit operators, too deep) */
    int nprog;
    /* The register form of prog (has_regs): registers 0 .. nload-1 hold the
     * columns load_col[], the rest the temporaries; constants are read from
     * kval[]; the result is R[result]. */
    int has_regs;
    /* A common shape of the register form, run in line with no dispatch
     * (sc_expr_fused): 1 is `A * B * (K0 - C / K1)` with K1 != 0 (a line's
     * total after a percent discount); 0 none. */
    int fused;
    int fcol[3];
    double fk[2];
    sc_rins *rprog;
    int nrins, nload, nconst, result;
    int load_col[SC_EXPR_REGS];
    double kval[SC_EXPR_REGS];
} sc_expr;

/* One token of a pattern. */
typedef struct sc_token {
    int kind; /* 0 literal, 1 seq, 2 random, 3 column */
    int width;
    int col;
    const char *text; /* literal: into the pattern string */
    size_t len;
} sc_token;

/* A reference dataset: a list of strings or of records (JSON objects). */
typedef struct sc_dataset {
    char *name;
    size_t n;
    void *json; /* json_t array, owned */
} sc_dataset;

/* A business rule kept on a column, row by row: after the column's value is
 * made, a violating value is repaired as the original's post-pass would
 * (reference/generation-schema.md 4), from the row's own values and its
 * parent's. */
#define SC_MAX_REPAIRS 4
typedef struct sc_repair {
    int op;          /* 0 <, 1 <=, 2 >, 3 >= */
    int cross_table; /* right side is a parent's column through `via` */
    int right_col;   /* a column of this table (cross_column) or of right_table; -1: right_num */
    int right_table;
    int via;
    double right_num;
    shape_gen_stream s; /* (seed, table, column, "fix:<name>") */
    int constraint;     /* a `constraint` rule: kept by sc_constraint_fix (op 4: ==) */
    /* "this < / <= parent.total", the total a float sum of children that are
     * never negative (their last rule a constraint "> K", K >= 0) and kept
     * as made (no rule of its own): the children's partial sums only grow,
     * so the rule is known to hold once a partial sum, rounded as the total
     * would be, keeps it, and the remaining children need not be made
     * (sc_plan_columns; repair() asks total_keeps) */
    int sum_bound;
} sc_repair;

struct sc_ctx;
struct sc_frame;
struct sc_table;

typedef struct sc_column {
    /* ---- read by (nearly) every evaluation: first, in a few cache lines;
     * the whole struct is ~4 KB, and a field at its far end costs a cache
     * line of its own per column per row ---- */

    /* The column's compiled step (sc_plan_columns, at load): `fn` makes the
     * natural value (a function specialised to the strategy's variant, or
     * the generic one), `post` says what eval_mask must still do after it
     * (SC_POST_* bits: conversion to the declared type, the null draw, the
     * repairs), so the per-row loop tests no strategy, no rate and no type
     * that load already knew. plain_seq: a sequence key without nulls whose
     * value is its INT64 (another row reads it with no frame). */
    int (*fn)(struct sc_ctx *ctx, struct sc_frame *f, const struct sc_table *t, int ci, shape_gen_value *out,
              shape_err *err);
    uint8_t post;
    uint8_t op; /* SC_OP_*: which step eval_all runs in line (SC_OP_FN: through fn) */
    uint8_t conv_keep; /* SC_POST_SAME_KEEPS: the declared kind, a value of which convert() keeps; else 0xff */
    uint8_t plain_seq;
    uint8_t fk_step; /* a foreign key's drawing, chosen at load: 0 generic, 1 allocation, 2 zipf, 3 pareto, 4 uniform */
    uint8_t repair_const; /* 1: every rule compares with a number of its own (no other column): a value that
                             keeps them all is checked in line, repair() runs only for one that breaks a rule;
                             2: a temporal column whose rules are lower bounds from parents: its step checks
                             them with the instants it read anyway (sc_ctx.rules_kept) */
    /* foreign keys drawn by step_fk_drawn, and lookups: the table read's row
     * count (at the schema's preset) and the column read, fixed at load */
    uint64_t ref_rows;
    const struct sc_column *ref_key;
    uint8_t lookup_by_fk; /* a lookup through a foreign key of this row to the key it names: its parent row */
    uint8_t leaf; /* made from its row number alone (a distribution or a label, no other column, no rule, no
                     conversion to text): another row reads it through a value cache (sc_leaf_entry), not a frame */
    uint8_t kind;    /* declared type: enum shape_gen_kind */
    uint8_t natural; /* what the strategy produces */
    int nullable;
    int scale; /* -1: none */
    int strategy;
    /* the columns of this row this one needs, itself included (a bit per
     * column): another row reads one column without making the rest */
    uint32_t need;
    int nrepairs; /* (the rules: `repairs`, below) */
    shape_gen_stream s, s_null;
    double null_rate;
    /* sequence */
    int64_t start, step;
    /* foreign_key: parent table and its key column */
    int ref_table, ref_col;
    /* lookup, derived (via), conditional */
    int via;        /* column of this table (an FK or a key value), or -1 */
    int src_table;  /* table read, or -1 */
    int src_col;    /* column read (of src_table, or of this table when src_table < 0) */
    int key_col;    /* column of src_table matched against via's value */
    /* distribution */
    int family;
    int gmax;
    double p1, p2, p3;
    double lo, hi; /* clips (-inf/+inf) */
    shape_gen_zipf *zipf;
    double *gcdf; /* geometric clipped to a small max: P(X <= k) for k = 1..gmax (inversion, no logs) */

    /* ---- the rest, by strategy ---- */
    char *name;
    int precision;
    int max_length; /* 0: none */
    int file_index;
    /* constant */
    shape_gen_value constant;
    char *constant_text;
    /* choice, weighted_enum, lifecycle: labels and their alias table */
    size_t nlabels;
    char **labels;
    size_t *label_len; /* strlen of each label, from load */
    double *label_num;
    shape_gen_alias alias;
    /* pattern */
    char *pattern;
    sc_token *tokens;
    size_t ntokens;
    /* temporal */
    int64_t t_start_ns, t_end_ns;
    int day_granularity;
    int seasonal;
    shape_gen_seasonal season;
    /* foreign_key */
    int fk_mode;
    double alpha;
    int allocated; /* children of a parent are counted (computed / first_per_parent / max_per_parent) */
    int alloc_perm_children; /* 0: the table's first allocated FK, children consecutive */
    shape_gen_alloc *alloc;
    uint64_t unit, units, nchildren; /* children are allocated `unit` at a time: units = nchildren / unit,
                                        the remainder goes with the last unit (more than ~100 per parent) */
    shape_gen_perm parent_perm, child_perm;
    int max_per_parent;
    /* fan_out: a share of the children to the top fraction of the parents */
    int fan_shape;
    double fan_frac, fan_share, fan_inv_beta;
    int fan_shuffle;
    uint64_t fan_top;
    shape_gen_perm fan_perm; /* rank -> parent row (shuffle) */
    /* sample_rate: a fixed sample of sample_m distinct parents, taken in turn */
    double sample_rate;
    uint64_t sample_m;
    shape_gen_perm sample_perm;
    int constrained_by;   /* column of this table, or -1 */
    int constrained_pcol; /* the same-named column of the parent */
    int constrained_exact; /* both are keys to one table and the parent's is allocated: pick among its children */
    /* derived */
    int add_days;
    int days_fixed; /* days != INT32_MIN: exactly that many */
    int days_family; /* 0 uniform 1 lognormal 2 normal */
    double d_mean, d_sigma, d_min, d_max;
    /* correlated */
    int corr_op; /* 0 multiply 1 add 2 subtract */
    /* formula */
    sc_expr expr;
    /* conditional: cond column, op (0 is null, 1 is not null, 2 ==, 3 !=), value */
    int cond_op;
    int cond_numeric;
    double cond_num;
    char *cond_text;
    shape_gen_value branch[2]; /* true, false */
    int branch_lookup[2];      /* the branch is an inline lookup (cast to float) */
    int bl_via[2], bl_table[2], bl_col[2], bl_key[2];
    char *branch_text[2];
    /* first_per_parent */
    int parent_column;
    int invert;
    /* computed */
    int rule;
    int child_table, child_col, child_fk;
    uint32_t child_same; /* child columns equal in every child of one parent (the key, and pure functions of
                            it): made for the first child and handed to the rest */
    /* self_referencing */
    int levels;
    uint64_t level_end[16]; /* rows of levels 1..levels end here */
    int pk_column;
    /* reference_data / record_sample / record_field */
    sc_dataset *dataset;
    int dataset_index;
    char *field;
    int unique;
    int anchor; /* record_field: the record_sample column of the same dataset */
    shape_gen_perm record_perm;
    /* empirical: the inverse of the piecewise-linear CDF through (eq[i], ex[i]) */
    double *eq, *ex;
    int neq;
    int e_nearest;
    /* conditional_table: one weighted pick per value of src_col; each case is
     * a weighted_enum column (its name is the value it answers) */
    struct sc_column *cases;
    size_t ncases;
    int default_case; /* index into cases, or -1 */
    /* scd2: versions of one entity are the children of one parent row of the
     * business_key foreign key (an allocation) */
    int scd_role;
    int business_key;
    int scd_gap; /* min_gap_days */
    int64_t scd_day0, scd_days; /* the range: first epoch day, days */
    shape_gen_stream scd_s;     /* (seed, table, business_key, "scd2"): shared by the table's scd2 columns */
    /* native: the provider, and for email the row's name columns (or -1) */
    int provider;
    int first_col, last_col;
    int width;
    /* business rules on this column */
    sc_repair repairs[SC_MAX_REPAIRS];
    /* schema_strat.c: the state of hierarchy / hierarchy_field / bootstrap /
     * address (owned there), and the column's place in its table's copula
     * (index + 1; 0: none) */
    void *ext;
    int copula;
    /* reference_data / record_sample / record_field: the field's value in
     * each record (texts point into the dataset), from load */
    shape_gen_value *rec_values;
    /* (the struct's size in cache lines is odd, see below) */
    char stride_pad[SC_COLUMN_PAD];
} sc_column;
/* A table's columns are one array, walked column by column, and each row
 * reads the first (hot) lines of many columns. With a stride near a multiple
 * of 4 KB those lines all fall into the same few sets of the L1 data cache
 * (its set index repeats every 4 KB) and evict each other; an odd number of
 * 64-byte lines puts consecutive columns' hot lines in consecutive sets.
 * When a field is added or removed, set SC_COLUMN_PAD so this holds again. */
_Static_assert(sizeof(sc_column) % 128 == 64, "sc_column: adjust SC_COLUMN_PAD to an odd number of 64-byte lines");

/* sc_column.op: the steps a whole row's loop (eval_all) calls directly
 * (a switch the compiler inlines), not through fn. */
enum { SC_OP_FN, SC_OP_SEQ, SC_OP_LABEL, SC_OP_DIST, SC_OP_FK_DRAWN, SC_OP_LOOKUP, SC_OP_FORMULA, SC_OP_COND };

#define SC_POST_CONVERT 1u
#define SC_POST_NULL 2u
#define SC_POST_REPAIR 4u
#define SC_POST_SAME_KEEPS 8u /* convert() keeps a value already of the declared kind */

typedef struct sc_table {
    char *name;
    size_t ncols;
    sc_column *cols;                        /* in evaluation (= output) order */
    shape_gen_column out[SHAPE_GEN_MAX_COLUMNS]; /* what emit sees */
    int pk;                                 /* first primary-key column, or -1 */
    int event_time_col;
    uint64_t rows[SC_MAX_PRESETS];          /* per preset */
    int deps[SC_MAX_TABLES];
    int ndeps;
    void *copula; /* schema_strat.c: correlated_columns as a Gaussian copula, or NULL */
} sc_table;

typedef struct sc_schema {
    char *name;
    char *dir; /* the schema file's folder (datasets are looked up there) */
    uint64_t seed;
    uint64_t fingerprint; /* hash of the schema's bytes */
    int64_t range_start_ns, range_end_ns; /* model.date_range, or 0/0 */
    int has_range;
    size_t npresets;
    char *presets[SC_MAX_PRESETS];
    int default_preset;
    size_t preset; /* the one opened: tables[].rows[preset] */
    size_t ntables;
    sc_table *tables; /* in dependency (stream) order */
    size_t ndatasets;
    sc_dataset *datasets;
    void *root; /* json_t of the document, owned */
} sc_schema;

/* ---- schema_load.c --------------------------------------------------------- */

/* Load and validate text[0..len) (datasets are looked up in `dir`) for
 * `preset` (NULL: the schema's own scale) and, when use_seed, `seed` (else
 * model.seed). A dataset `shared` (another load of a schema, or NULL)
 * already holds is taken from it by reference instead of read again: the
 * datasets are read-only once loaded. Every error is one line naming table
 * and column. */
int sc_schema_load(const char *text, size_t len, const char *dir, const char *preset, uint64_t seed, int use_seed,
                   const sc_schema *shared, sc_schema **out, shape_err *err);
void sc_schema_free(sc_schema *s);

/* ---- schema_expr.c ---------------------------------------------------------- */

/* Compile `text` over the columns of t that come before column `self`.
 * The error names table.column. */
int sc_expr_compile(const sc_table *t, int self, const char *text, sc_expr *out, shape_err *err);
void sc_expr_free(sc_expr *e);
/* The columns the expression reads (up to cap; repeats possible); returns the count. */
int sc_expr_columns(const sc_expr *e, int *cols, int cap);
/* Evaluate over a row's values; returns 0 and *out, or 1 when an input is
 * null (the result is null). */
int sc_expr_eval(const sc_expr *e, const shape_gen_value *vals, double *out);
/* The fused shape's result (e->fused 1): the register form's operations in
 * its order, so the same double; 1 when an input is null. */
static inline int sc_fused_num(const shape_gen_value *v, double *x)
{
    if (v->kind == SHAPE_GEN_FLOAT64) {
        *x = v->v.f;
        return 1;
    }
    if (v->kind == SHAPE_GEN_NULL) return 0;
    *x = v->kind == SHAPE_GEN_BOOL ? (double)v->v.b : (double)v->v.i;
    return 1;
}
static inline int sc_expr_fused(const sc_expr *e, const shape_gen_value *vals, double *out)
{
    double a, b, c;
    if (!sc_fused_num(&vals[e->fcol[0]], &a) || !sc_fused_num(&vals[e->fcol[1]], &b) ||
        !sc_fused_num(&vals[e->fcol[2]], &c))
        return 1;
    double t = a * b;
    double u = c / e->fk[1];
    *out = t * (e->fk[0] - u);
    return 0;
}

/* sc_expr_eval of an expression with a register form (e->has_regs). */
int sc_expr_eval_regs(const sc_expr *e, const shape_gen_value *vals, double *out);

/* ---- schema_eval.c ---------------------------------------------------------- */

/* One evaluation of a row: values, the parent row each FK column picked. */
typedef struct sc_frame {
    shape_gen_row *row;
    uint64_t *prow; /* [SHAPE_GEN_MAX_COLUMNS] */
    int table;
    uint64_t r;
    uint32_t valid; /* the columns evaluated so far (a bit per column) */
} sc_frame;

/* A row of another table read before, kept with the prefix of columns
 * evaluated so far: consecutive children read the same parent, hot zipf
 * parents repeat, a total reads children that read their parent back. A
 * cache changes no value (every value is a pure function of its row); it
 * only saves recomputing. Direct-mapped, SC_CACHE_WAYS rows per table,
 * allocated per table on first use. */
#define SC_CACHE_WAYS 32
typedef struct sc_cache_entry {
    uint64_t r;
    uint32_t valid; /* the columns evaluated (a bit per column); 0 empty */
    int busy;       /* being evaluated (a read of the same slot goes uncached) */
    uint64_t prow[SHAPE_GEN_MAX_COLUMNS];
    shape_gen_row row;
} sc_cache_entry;

/* A leaf column's values as other rows read them (a product's price read by
 * every order line): direct-mapped on the row, SC_LEAF_WAYS values a column,
 * allocated on first use. Hot rows of a skewed foreign key are the low
 * ranks, which map to distinct slots. Like the row cache it changes no value;
 * a hit costs a compare instead of a frame, a miss a draw. */
#define SC_LEAF_WAYS 256
typedef struct sc_leaf_entry {
    uint64_t r1; /* row + 1; 0 empty */
    shape_gen_value v;
} sc_leaf_entry;

/* The last allocation run a counted foreign key's child fell in, and the
 * last parent rank's row (consecutive children share both: a stream of order
 * lines asks the allocation and the permutation once per order, not per
 * line). Like the caches it changes no value. */
#define SC_ALLOC_MEMO 8
typedef struct sc_alloc_memo {
    const struct sc_column *c; /* NULL: empty */
    shape_gen_alloc_run run;
    uint64_t rank, pr;
} sc_alloc_memo;

typedef struct sc_ctx {
    const sc_schema *s;
    size_t preset;
    int depth;
    sc_cache_entry *cache[SC_MAX_TABLES];
    uint64_t prows[SC_MAX_DEPTH][SHAPE_GEN_MAX_COLUMNS];
    shape_gen_row stack[SC_MAX_DEPTH];
    sc_frame frames[SC_MAX_DEPTH];
    /* the next read_other's row is a child read for its parent's total: its
     * key column seed_col1 - 1 (0: none) is known to hold seed_val, parent
     * row seed_prow, so it is not recomputed through the allocation */
    int seed_col1;
    uint64_t seed_prow;
    shape_gen_value seed_val;
    sc_leaf_entry *leaf[SC_MAX_TABLES][SHAPE_GEN_MAX_COLUMNS];
    int rules_kept; /* set by a repair_const 2 step: its value keeps every rule of its column */
    sc_alloc_memo amemo[SC_ALLOC_MEMO]; /* by column index; zeroed with the context */
} sc_ctx;

void sc_ctx_release(sc_ctx *ctx);

/* ---- schema_strat.c ---------------------------------------------------------- */
/* hierarchy, hierarchy_field, bootstrap, address, the copula of
 * correlated_columns and the `constraint` rules. The parsers return 0, or -1
 * with one line in msg (the caller names the table and column), or -2 when
 * out of memory. A dataset the generator names is loaded into c->dataset by
 * the caller before sc_strat_parse. */
struct json_t;
int sc_strat_parse(sc_schema *s, int ti, int self, struct json_t *g, char *msg, size_t cap);
/* Once every generator of every table is read: the anchors of
 * hierarchy_field columns. */
int sc_strat_link(sc_schema *s, int ti, int ci, char *msg, size_t cap);
int sc_strat_eval(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err);
void sc_strat_free(sc_column *c);
int sc_strat_may_be_null(const sc_column *c);
/* correlated_columns and generation.output: *table / *column name the culprit. */
int sc_copula_parse(sc_schema *s, struct json_t *root, char *msg, size_t cap, const char **table, const char **column);
/* The value of a distribution or empirical column driven by the copula. */
void sc_copula_eval(const sc_schema *s, const sc_table *t, int ci, uint64_t r, shape_gen_value *out);
void sc_copula_free(sc_table *t);
/* The inverse CDFs a uniform u drives (the plain draw and the copula's). */
double sc_empirical_inverse(const sc_column *c, double u);
double sc_triangular_inverse(const sc_column *c, double u);
/* A violated `constraint` rule: *v (the column's value, in its declared
 * type) becomes one that keeps `v OP right`. */
void sc_constraint_fix(const sc_column *c, const sc_repair *rp, const shape_gen_value *right, uint64_t r,
                       shape_gen_value *v);

/* Compile each column's step (sc_column.fn, post, plain_seq); once, after
 * the whole schema is loaded and linked. */
void sc_plan_columns(sc_schema *s);

/* Fill row r of table t (all columns) into out. */
int sc_eval_row(sc_ctx *ctx, int t, uint64_t r, shape_gen_row *out, shape_err *err);
/* c->rec_values for a column reading a dataset's field (reference_data,
 * record_sample, record_field): each record's value looked up once at load
 * instead of by name per row. -1 when out of memory. */
int sc_record_values(sc_column *c);

#endif
