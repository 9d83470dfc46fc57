/* schema_expr.c — the `formula` strategy's expressions: compiled once at
 * load into a node array, evaluated per row over the row's earlier columns.
 *
 * Why: formulas (a line total from quantity, price and discount) are pure
 * functions of the row, so they stream as they are; what they need is a
 * safe, small language — the original's Python-expression subset — with
 * errors at load time rather than per row.
 * How: a recursive-descent parser with Python's precedence (conditional
 * `a if c else b`, or, and, not, comparisons, + -, * / // %, unary -, **)
 * builds nodes; evaluation is a recursive walk in doubles (booleans are
 * 0/1), or, for an expression without `if`, `and` and `or` (no short
 * circuit), a loop over the nodes in post order — run as a register form
 * (to_regs: columns loaded once, constants read in place) or, when that
 * does not fit, on a small stack — which computes the same operations in
 * the same order (the row evaluator's hottest strategy in the retail
 * schema). A null input makes the result null. Functions: abs, round, min, max
 * and the np_* names of the original; np_nan is NaN.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"

enum {
    OP_NUM, OP_COL, OP_NEG, OP_NOT, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FDIV, OP_MOD, OP_POW,
    OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE, OP_AND, OP_OR, OP_IF,
    OP_ABS, OP_ROUND, OP_MIN, OP_MAX, OP_SQRT, OP_LOG, OP_EXP, OP_FLOOR, OP_CEIL, OP_CLIP, OP_WHERE,
    /* the flat program only (fuse): + - * / with a column or a constant as the right operand */
    OP_ADD_COL, OP_SUB_COL, OP_MUL_COL, OP_DIV_COL, OP_ADD_NUM, OP_SUB_NUM, OP_MUL_NUM, OP_DIV_NUM,
};

typedef struct parser {
    const sc_table *t;
    int self;
    const char *p;
    const char *text;
    sc_expr *e;
    int cap;
    shape_err *err;
    int failed;
} parser;

static int perr(parser *P, const char *what)
{
    if (!P->failed)
        shape_err_set(P->err, SHAPE_EINVAL, "table '%.60s', column '%.60s': formula '%.80s': %s at offset %d",
                      P->t->name, P->t->cols[P->self].name, P->text, what, (int)(P->p - P->text));
    P->failed = 1;
    return -1;
}

static int node(parser *P, int op, int a, int b, int c)
{
    if (P->failed) return -1;
    if (P->e->nnodes == P->cap) {
        int nc = P->cap ? P->cap * 2 : 16;
        sc_node *g = realloc(P->e->nodes, (size_t)nc * sizeof *g);
        if (!g) return perr(P, "out of memory");
        P->e->nodes = g;
        P->cap = nc;
    }
    sc_node *n = &P->e->nodes[P->e->nnodes];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->a = a;
    n->b = b;
    n->c = c;
    return P->e->nnodes++;
}

static void ws(parser *P)
{
    while (*P->p == ' ' || *P->p == '\t' || *P->p == '\n') P->p++;
}

static int word(parser *P, const char *w)
{
    ws(P);
    size_t n = strlen(w);
    if (strncmp(P->p, w, n) == 0 && !(P->p[n] == '_' || (P->p[n] >= 'a' && P->p[n] <= 'z') ||
                                      (P->p[n] >= 'A' && P->p[n] <= 'Z') || (P->p[n] >= '0' && P->p[n] <= '9'))) {
        P->p += n;
        return 1;
    }
    return 0;
}

static int sym(parser *P, const char *s)
{
    ws(P);
    size_t n = strlen(s);
    if (strncmp(P->p, s, n) == 0) {
        P->p += n;
        return 1;
    }
    return 0;
}

static int expr(parser *P);

static int atom(parser *P)
{
    ws(P);
    if (P->failed) return -1;
    char ch = *P->p;
    if (sym(P, "(")) {
        int x = expr(P);
        if (!sym(P, ")")) return perr(P, "expected ')'");
        return x;
    }
    if ((ch >= '0' && ch <= '9') || ch == '.') {
        char *end;
        double v = strtod(P->p, &end);
        if (end == P->p) return perr(P, "bad number");
        P->p = end;
        int n = node(P, OP_NUM, -1, -1, -1);
        if (n >= 0) P->e->nodes[n].num = v;
        return n;
    }
    if (ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
        const char *s = P->p;
        while (*P->p == '_' || (*P->p >= 'a' && *P->p <= 'z') || (*P->p >= 'A' && *P->p <= 'Z') ||
               (*P->p >= '0' && *P->p <= '9'))
            P->p++;
        char name[128];
        size_t len = (size_t)(P->p - s);
        if (len >= sizeof name) return perr(P, "name too long");
        memcpy(name, s, len);
        name[len] = 0;
        if (strcmp(name, "np_nan") == 0 || strcmp(name, "True") == 0 || strcmp(name, "False") == 0) {
            int n = node(P, OP_NUM, -1, -1, -1);
            if (n >= 0) P->e->nodes[n].num = name[0] == 'n' ? NAN : name[0] == 'T';
            return n;
        }
        ws(P);
        if (*P->p == '(') {
            static const struct {
                const char *name;
                int op, min, max;
            } fns[] = {{"abs", OP_ABS, 1, 1},      {"np_abs", OP_ABS, 1, 1},     {"round", OP_ROUND, 1, 2},
                       {"np_round", OP_ROUND, 1, 2}, {"min", OP_MIN, 2, 8},       {"max", OP_MAX, 2, 8},
                       {"np_minimum", OP_MIN, 2, 2}, {"np_maximum", OP_MAX, 2, 2}, {"np_sqrt", OP_SQRT, 1, 1},
                       {"np_log", OP_LOG, 1, 1},     {"np_exp", OP_EXP, 1, 1},     {"np_floor", OP_FLOOR, 1, 1},
                       {"np_ceil", OP_CEIL, 1, 1},   {"np_clip", OP_CLIP, 3, 3},   {"np_where", OP_WHERE, 3, 3}};
            int fi = -1;
            for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
                if (strcmp(fns[i].name, name) == 0) fi = (int)i;
            if (fi < 0) return perr(P, "unknown function (use abs, round, min, max or np_*)");
            P->p++;
            int args[8], na = 0;
            ws(P);
            if (*P->p != ')')
                do {
                    if (na == 8) return perr(P, "too many arguments");
                    args[na++] = expr(P);
                } while (sym(P, ","));
            if (!sym(P, ")")) return perr(P, "expected ')'");
            if (na < fns[fi].min || na > fns[fi].max) return perr(P, "wrong number of arguments");
            int n = node(P, fns[fi].op, -1, -1, -1);
            if (n >= 0) {
                P->e->nodes[n].nargs = na;
                memcpy(P->e->nodes[n].args, args, sizeof args);
            }
            return n;
        }
        int col = -1;
        for (int i = 0; i < P->self; i++)
            if (strcmp(P->t->cols[i].name, name) == 0) col = i;
        if (col < 0) return perr(P, "names no earlier column (a formula reads columns generated before it)");
        int k = P->t->cols[col].kind;
        if (k != SHAPE_GEN_INT64 && k != SHAPE_GEN_FLOAT64 && k != SHAPE_GEN_BOOL)
            return perr(P, "reads a column that is not numeric or boolean");
        int n = node(P, OP_COL, -1, -1, -1);
        if (n >= 0) P->e->nodes[n].col = col;
        return n;
    }
    return perr(P, "expected a number, a column or '('");
}

static int unary(parser *P);

static int power(parser *P)
{
    int a = atom(P);
    if (sym(P, "**")) return node(P, OP_POW, a, unary(P), -1);
    return a;
}

static int unary(parser *P)
{
    if (sym(P, "-")) return node(P, OP_NEG, unary(P), -1, -1);
    if (sym(P, "+")) return unary(P);
    return power(P);
}

static int term(parser *P)
{
    int a = unary(P);
    for (;;) {
        if (P->failed) return -1;
        ws(P);
        if (P->p[0] == '*' && P->p[1] != '*') P->p++, a = node(P, OP_MUL, a, unary(P), -1);
        else if (sym(P, "//")) a = node(P, OP_FDIV, a, unary(P), -1);
        else if (sym(P, "/")) a = node(P, OP_DIV, a, unary(P), -1);
        else if (sym(P, "%")) a = node(P, OP_MOD, a, unary(P), -1);
        else return a;
    }
}

static int arith(parser *P)
{
    int a = term(P);
    for (;;) {
        if (P->failed) return -1;
        if (sym(P, "+")) a = node(P, OP_ADD, a, term(P), -1);
        else if (sym(P, "-")) a = node(P, OP_SUB, a, term(P), -1);
        else return a;
    }
}

static int comparison(parser *P)
{
    int a = arith(P), result = -1;
    for (;;) {
        if (P->failed) return -1;
        int op = sym(P, "<=") ? OP_LE : sym(P, ">=") ? OP_GE : sym(P, "==") ? OP_EQ : sym(P, "!=") ? OP_NE
               : sym(P, "<") ? OP_LT : sym(P, ">") ? OP_GT : -1;
        if (op < 0) return result < 0 ? a : result;
        int b = arith(P);
        int cmp = node(P, op, a, b, -1);
        result = result < 0 ? cmp : node(P, OP_AND, result, cmp, -1); /* chained */
        a = b;
    }
}

static int not_expr(parser *P)
{
    if (word(P, "not")) return node(P, OP_NOT, not_expr(P), -1, -1);
    return comparison(P);
}

static int and_expr(parser *P)
{
    int a = not_expr(P);
    while (!P->failed && word(P, "and")) a = node(P, OP_AND, a, not_expr(P), -1);
    return a;
}

static int or_expr(parser *P)
{
    int a = and_expr(P);
    while (!P->failed && word(P, "or")) a = node(P, OP_OR, a, and_expr(P), -1);
    return a;
}

static int expr(parser *P)
{
    int a = or_expr(P);
    if (!P->failed && word(P, "if")) {
        int c = or_expr(P);
        if (!word(P, "else")) return perr(P, "expected 'else'");
        int b = expr(P);
        return node(P, OP_IF, a, b, c);
    }
    return a;
}

#define SC_FLAT_STACK 32

/* Append node n's post order; the stack depth it needs into *depth. -1 when
 * it cannot be flat. */
static int post_order(sc_expr *e, int n, int *depth)
{
    const sc_node *x = &e->nodes[n];
    if (x->op == OP_AND || x->op == OP_OR || x->op == OP_IF) return -1;
    int kids[8], nk = 0, need = 0;
    if (x->op >= OP_ABS)
        for (int i = 0; i < x->nargs; i++) kids[nk++] = x->args[i];
    else if (x->op == OP_NEG || x->op == OP_NOT)
        kids[nk++] = x->a;
    else if (x->op != OP_NUM && x->op != OP_COL)
        kids[nk++] = x->a, kids[nk++] = x->b;
    for (int i = 0; i < nk; i++) {
        int d;
        if (post_order(e, kids[i], &d) != 0) return -1;
        if (i + d > need) need = i + d; /* i values already pushed below it */
    }
    if (need < 1) need = 1;
    *depth = need;
    sc_ins *in = &e->prog[e->nprog++];
    in->op = x->op;
    in->nargs = x->nargs;
    in->col = x->col;
    in->num = x->num;
    return 0;
}

/* A push of a column or a constant followed by + - * / becomes one
 * instruction with that right operand (the same operations in the same
 * order, a null column still ending the evaluation where it is read): fewer
 * dispatches per row. */
static void fuse(sc_expr *e)
{
    int w = 0;
    for (int i = 0; i < e->nprog; i++) {
        sc_ins in = e->prog[i];
        if (i + 1 < e->nprog && (in.op == OP_COL || in.op == OP_NUM)) {
            int next = e->prog[i + 1].op;
            if (next == OP_ADD || next == OP_SUB || next == OP_MUL || next == OP_DIV) {
                in.op = (in.op == OP_COL ? OP_ADD_COL : OP_ADD_NUM) + (next - OP_ADD);
                i++;
            }
        }
        e->prog[w++] = in;
    }
    e->nprog = w;
}

/* The register form's operations (sc_rins.op): R[d] = R[a] op R[b] (RR),
 * R[d] = R[a] op K[b] (RK: a constant on the right), K[a] - R[b] and K[a] /
 * R[b] (KR; a constant + or * on the left is put on the right, IEEE + and *
 * being commutative); copies; and the rest through apply_bin / apply_fn on
 * registers (sc_rins.fn: the OP_ code). */
enum { X_ADD, X_SUB, X_MUL, X_DIV, X_ADDK, X_SUBK, X_MULK, X_DIVK, X_KSUB, X_KDIV, X_MOV, X_MOVK, X_NEG, X_NOT, X_BIN, X_FN };

/* The register form of the (unfused) post-order program: each stack slot
 * becomes a temporary register, and a push of a column or a constant
 * becomes no instruction at all — the operation that pops it reads the
 * column's register (each column loaded once, before the program) or the
 * constant in place. The same operations on the same operands in the same
 * order, so every result is the same double; a null column makes the result
 * null wherever it is read, so reading them all first changes nothing.
 * `quantity * unit_price * (1 - discount_percent / 100)`: 4 operations
 * instead of the stack program's 5 fused and 2 pushes. Left out (has_regs 0)
 * when the registers would not fit. */
/* A register form of the shape sc_expr_fused runs in line: `A * B * (K0 -
 * C / K1)` as to_regs writes it (T = R0 * R1; U = R2 / K1; V = K0 - U;
 * T * V, the temporaries above the three loaded columns), K1 not 0 (so
 * X_DIVK's zero test is known at load). */
static void fuse_shape(sc_expr *e)
{
    const sc_rins *p = e->rprog;
    e->fused = 0;
    if (e->nload != 3 || e->nrins != 4) return;
    if (p[0].op != X_MUL || p[0].a != 0 || p[0].b != 1) return;
    if (p[1].op != X_DIVK || p[1].a != 2) return;
    if (p[2].op != X_KSUB || p[2].b != p[1].d) return;
    if (p[3].op != X_MUL || p[3].a != p[0].d || p[3].b != p[2].d || e->result != p[3].d) return;
    if (p[0].d < 3 || p[1].d < 3 || p[2].d < 3 || p[1].d == p[0].d || p[2].d == p[0].d) return;
    double k1 = e->kval[p[1].b], k0 = e->kval[p[2].a];
    if (!(k1 != 0)) return;
    for (int k = 0; k < 3; k++) e->fcol[k] = e->load_col[k];
    e->fk[0] = k0;
    e->fk[1] = k1;
    e->fused = 1;
}

static void to_regs(sc_expr *e)
{
    int opnd[SC_FLAT_STACK]; /* each stack slot's value: a register, or -1 - its constant's index */
    int sp = 0, nload = 0, nconst = 0, maxsp = 0;
    for (int i = 0; i < e->nprog; i++) { /* the loads first, so the temporaries' base is known */
        const sc_ins *in = &e->prog[i];
        if (in->op != OP_COL) continue;
        int seen = 0;
        for (int k = 0; k < nload; k++) seen |= e->load_col[k] == in->col;
        if (!seen) {
            if (nload == SC_EXPR_REGS) return;
            e->load_col[nload++] = in->col;
        }
    }
    int base = nload;
    sc_rins *rp = calloc(((size_t)e->nprog + 1) * 9, sizeof *rp); /* a function: up to 8 copies */
    if (!rp) return;
    int n = 0;
#define EMIT(...) (rp[n++] = (sc_rins){__VA_ARGS__})
    for (int i = 0; i < e->nprog; i++) {
        const sc_ins *in = &e->prog[i];
        int op = in->op;
        if (op == OP_COL || op == OP_NUM) {
            if (op == OP_COL) {
                int reg = 0;
                while (e->load_col[reg] != in->col) reg++;
                opnd[sp++] = reg;
            } else {
                if (nconst == SC_EXPR_REGS) goto fail;
                e->kval[nconst] = in->num;
                opnd[sp++] = -1 - nconst++;
            }
            if (sp > maxsp) maxsp = sp;
            continue;
        }
        int nin = op >= OP_ABS ? in->nargs : op == OP_NEG || op == OP_NOT ? 1 : 2;
        int at = sp - nin, d = base + at;
        if (base + maxsp > SC_EXPR_REGS) goto fail;
        int a = opnd[at], b = nin == 2 ? opnd[at + 1] : 0;
        if (nin == 2 && op >= OP_ADD && op <= OP_DIV && !(a < 0 && b < 0)) {
            int k = op - OP_ADD;
            if (a >= 0 && b >= 0) EMIT(.op = (uint8_t)(X_ADD + k), .d = (uint8_t)d, .a = (uint8_t)a, .b = (uint8_t)b);
            else if (b < 0) EMIT(.op = (uint8_t)(X_ADDK + k), .d = (uint8_t)d, .a = (uint8_t)a, .b = (uint8_t)(-1 - b));
            else if (op == OP_ADD || op == OP_MUL)
                EMIT(.op = (uint8_t)(X_ADDK + k), .d = (uint8_t)d, .a = (uint8_t)b, .b = (uint8_t)(-1 - a));
            else EMIT(.op = (uint8_t)(op == OP_SUB ? X_KSUB : X_KDIV), .d = (uint8_t)d, .a = (uint8_t)(-1 - a), .b = (uint8_t)b);
        } else {
            /* the rest read registers: a constant operand is copied into its slot's
             * temporary, and a function's arguments into consecutive ones */
            for (int k = 0; k < nin; k++) {
                int o = opnd[at + k];
                if (o < 0) EMIT(.op = X_MOVK, .d = (uint8_t)(d + k), .a = (uint8_t)(-1 - o));
                else if (o != d + k && op >= OP_ABS) EMIT(.op = X_MOV, .d = (uint8_t)(d + k), .a = (uint8_t)o);
            }
            a = opnd[at] < 0 || op >= OP_ABS ? d : opnd[at];
            b = nin == 2 ? (opnd[at + 1] < 0 ? d + 1 : opnd[at + 1]) : 0;
            EMIT(.op = (uint8_t)(op >= OP_ABS ? X_FN : op == OP_NEG ? X_NEG : op == OP_NOT ? X_NOT : X_BIN),
                 .fn = (uint8_t)op, .nargs = (uint8_t)nin, .d = (uint8_t)d, .a = (uint8_t)a, .b = (uint8_t)b);
        }
        sp = at;
        opnd[sp++] = d;
    }
#undef EMIT
    if (sp != 1 || base + maxsp > SC_EXPR_REGS) goto fail;
    if (opnd[0] < 0) { /* the whole formula is a constant */
        rp[n++] = (sc_rins){.op = X_MOVK, .d = (uint8_t)base, .a = (uint8_t)(-1 - opnd[0])};
        opnd[0] = base;
    }
    e->rprog = rp;
    e->nrins = n;
    e->nload = nload;
    e->nconst = nconst;
    e->result = opnd[0];
    e->has_regs = 1;
    fuse_shape(e);
    return;
fail:
    free(rp);
}

static void flatten(sc_expr *e)
{
    e->prog = calloc((size_t)e->nnodes + 1, sizeof *e->prog);
    e->nprog = 0;
    int depth = 0;
    if (!e->prog) return; /* the tree walk serves */
    if (post_order(e, e->root, &depth) != 0 || depth > SC_FLAT_STACK) {
        free(e->prog);
        e->prog = NULL;
        e->nprog = 0;
    } else {
        to_regs(e);
        fuse(e);
    }
}

int sc_expr_compile(const sc_table *t, int self, const char *text, sc_expr *out, shape_err *err)
{
    memset(out, 0, sizeof *out);
    parser P = {.t = t, .self = self, .p = text, .text = text, .e = out, .err = err};
    int root = expr(&P);
    ws(&P);
    if (!P.failed && *P.p) perr(&P, "unexpected text");
    if (P.failed) {
        sc_expr_free(out);
        return err->code ? err->code : SHAPE_EINVAL;
    }
    out->root = root;
    flatten(out);
    return SHAPE_OK;
}

int sc_expr_columns(const sc_expr *e, int *cols, int cap)
{
    int n = 0;
    for (int k = 0; k < e->nnodes && n < cap; k++)
        if (e->nodes[k].op == OP_COL) cols[n++] = e->nodes[k].col;
    return n;
}

void sc_expr_free(sc_expr *e)
{
    free(e->rprog);
    e->rprog = NULL;
    e->nrins = 0;
    e->has_regs = 0;
    e->fused = 0;
    free(e->prog);
    e->prog = NULL;
    e->nprog = 0;
    free(e->nodes);
    e->nodes = NULL;
    e->nnodes = 0;
}

static double py_round(double x, double nd)
{
    double f = 1;
    int d = (int)nd;
    for (int i = 0; i < d && i < 15; i++) f *= 10;
    double y = x * f, r = sc_floor(y), diff = y - r;
    if (diff > 0.5 || (diff == 0.5 && sc_fmod(r, 2.0) != 0)) r += 1;
    return r / f;
}

static double apply_fn(int op, int nargs, const double *v);
static inline double apply_bin(int op, double a, double b);

static int ev(const sc_expr *e, int n, const shape_gen_value *vals, double *out)
{
    const sc_node *x = &e->nodes[n];
    double a = 0, b = 0, c = 0;
    switch (x->op) {
    case OP_NUM: *out = x->num; return 0;
    case OP_COL: {
        const shape_gen_value *v = &vals[x->col];
        if (v->kind == SHAPE_GEN_NULL) return 1;
        *out = v->kind == SHAPE_GEN_FLOAT64 ? v->v.f : v->kind == SHAPE_GEN_BOOL ? (double)v->v.b : (double)v->v.i;
        return 0;
    }
    case OP_IF:
        if (ev(e, x->c, vals, &c)) return 1;
        return ev(e, c != 0 ? x->a : x->b, vals, out);
    case OP_AND:
        if (ev(e, x->a, vals, &a)) return 1;
        if (a == 0) return *out = 0, 0;
        if (ev(e, x->b, vals, &b)) return 1;
        return *out = b != 0, 0;
    case OP_OR:
        if (ev(e, x->a, vals, &a)) return 1;
        if (a != 0) return *out = 1, 0;
        if (ev(e, x->b, vals, &b)) return 1;
        return *out = b != 0, 0;
    default: break;
    }
    if (x->op >= OP_ABS) {
        double v[8];
        for (int i = 0; i < x->nargs; i++)
            if (ev(e, x->args[i], vals, &v[i])) return 1;
        *out = apply_fn(x->op, x->nargs, v);
        return 0;
    }
    if (ev(e, x->a, vals, &a)) return 1;
    if (x->op == OP_NEG) return *out = -a, 0;
    if (x->op == OP_NOT) return *out = a == 0, 0;
    if (ev(e, x->b, vals, &b)) return 1;
    *out = apply_bin(x->op, a, b);
    return 0;
}

static double apply_fn(int op, int nargs, const double *v)
{
    double r0 = 0, *out = &r0;
    {
        switch (op) {
        case OP_ABS: *out = sc_fabs(v[0]); break;
        case OP_ROUND: *out = py_round(v[0], nargs > 1 ? v[1] : 0); break;
        case OP_MIN:
        case OP_MAX: {
            double r = v[0];
            for (int i = 1; i < nargs; i++) r = op == OP_MIN ? (v[i] < r ? v[i] : r) : (v[i] > r ? v[i] : r);
            *out = r;
            break;
        }
        case OP_SQRT: *out = v[0] >= 0 ? shape_gen_sqrt(v[0]) : NAN; break;
        case OP_LOG: *out = shape_gen_log(v[0]); break;
        case OP_EXP: *out = shape_gen_exp(v[0]); break;
        case OP_FLOOR: *out = sc_floor(v[0]); break;
        case OP_CEIL: *out = sc_ceil(v[0]); break;
        case OP_CLIP: *out = v[0] < v[1] ? v[1] : v[0] > v[2] ? v[2] : v[0]; break;
        case OP_WHERE: *out = v[0] != 0 ? v[1] : v[2]; break;
        }
    }
    return r0;
}

static inline double apply_bin(int op, double a, double b)
{
    double res = 0, *out = &res;
    switch (op) {
    case OP_ADD: *out = a + b; break;
    case OP_SUB: *out = a - b; break;
    case OP_MUL: *out = a * b; break;
    case OP_DIV: *out = b != 0 ? a / b : NAN; break;
    case OP_FDIV: *out = b != 0 ? sc_floor(a / b) : NAN; break;
    case OP_MOD: *out = b != 0 ? a - sc_floor(a / b) * b : NAN; break;
    case OP_POW:
        if (a > 0) *out = shape_gen_pow(a, b);
        else if (b == sc_floor(b) && sc_fabs(b) <= 64) {
            double r = 1;
            for (int i = 0; i < (int)sc_fabs(b); i++) r *= a;
            *out = b < 0 ? (r != 0 ? 1 / r : NAN) : r;
        } else
            *out = NAN;
        break;
    case OP_LT: *out = a < b; break;
    case OP_LE: *out = a <= b; break;
    case OP_GT: *out = a > b; break;
    case OP_GE: *out = a >= b; break;
    case OP_EQ: *out = a == b; break;
    case OP_NE: *out = a != b; break;
    }
    return res;
}

/* A column's value as a number: 0 when it is null. */
static inline int col_num(const shape_gen_value *v, double *x)
{
    if (v->kind == SHAPE_GEN_FLOAT64) {
        *x = v->v.f;
        return 1;
    }
    if (v->kind == SHAPE_GEN_NULL) return 0;
    *x = v->kind == SHAPE_GEN_BOOL ? (double)v->v.b : (double)v->v.i;
    return 1;
}

/* The register form's comparisons, powers and functions: out of line, so
 * the loop over + - * / stays small. */
static __attribute__((noinline)) double rare_op(const sc_rins *in, const double *R)
{
    return in->op == X_BIN ? apply_bin(in->fn, R[in->a], R[in->b]) : apply_fn(in->fn, in->nargs, &R[in->a]);
}

/* The register form (has_regs): see to_regs. Apart from sc_expr_eval so
 * the rows' step calls a small function of its own. */
int sc_expr_eval_regs(const sc_expr *e, const shape_gen_value *vals, double *out)
{
    double R[SC_EXPR_REGS];
    const double *K = e->kval;
    for (int k = 0; k < e->nload; k++)
        if (!col_num(&vals[e->load_col[k]], &R[k])) return 1;
    for (const sc_rins *in = e->rprog, *end = in + e->nrins; in < end; in++) {
        switch (in->op) {
        case X_ADD: R[in->d] = R[in->a] + R[in->b]; break;
        case X_SUB: R[in->d] = R[in->a] - R[in->b]; break;
        case X_MUL: R[in->d] = R[in->a] * R[in->b]; break;
        case X_DIV: R[in->d] = R[in->b] != 0 ? R[in->a] / R[in->b] : NAN; break;
        case X_ADDK: R[in->d] = R[in->a] + K[in->b]; break;
        case X_SUBK: R[in->d] = R[in->a] - K[in->b]; break;
        case X_MULK: R[in->d] = R[in->a] * K[in->b]; break;
        case X_DIVK: R[in->d] = K[in->b] != 0 ? R[in->a] / K[in->b] : NAN; break;
        case X_KSUB: R[in->d] = K[in->a] - R[in->b]; break;
        case X_KDIV: R[in->d] = R[in->b] != 0 ? K[in->a] / R[in->b] : NAN; break;
        case X_MOV: R[in->d] = R[in->a]; break;
        case X_MOVK: R[in->d] = K[in->a]; break;
        case X_NEG: R[in->d] = -R[in->a]; break;
        case X_NOT: R[in->d] = R[in->a] == 0; break;
        default: R[in->d] = rare_op(in, R); break;
        }
    }
    *out = R[e->result];
    return 0;
}

int sc_expr_eval(const sc_expr *e, const shape_gen_value *vals, double *out)
{
    if (!e->nodes) return 1;
    if (!e->prog) return ev(e, e->root, vals, out);
    if (e->has_regs) return sc_expr_eval_regs(e, vals, out);
    double st[SC_FLAT_STACK];
    int sp = 0;
    for (const sc_ins *in = e->prog, *end = in + e->nprog; in < end; in++) {
        switch (in->op) {
        case OP_NUM: st[sp++] = in->num; break;
        case OP_COL: {
            const shape_gen_value *v = &vals[in->col];
            if (v->kind == SHAPE_GEN_FLOAT64) { /* most inputs: no further test */
                st[sp++] = v->v.f;
                break;
            }
            if (v->kind == SHAPE_GEN_NULL) return 1;
            st[sp++] = v->kind == SHAPE_GEN_BOOL ? (double)v->v.b : (double)v->v.i;
            break;
        }
        case OP_NEG: st[sp - 1] = -st[sp - 1]; break;
        case OP_NOT: st[sp - 1] = st[sp - 1] == 0; break;
        case OP_ADD: sp--, st[sp - 1] = st[sp - 1] + st[sp]; break;
        case OP_SUB: sp--, st[sp - 1] = st[sp - 1] - st[sp]; break;
        case OP_MUL: sp--, st[sp - 1] = st[sp - 1] * st[sp]; break;
        case OP_DIV: sp--, st[sp - 1] = st[sp] != 0 ? st[sp - 1] / st[sp] : NAN; break;
        case OP_ADD_NUM: st[sp - 1] = st[sp - 1] + in->num; break;
        case OP_SUB_NUM: st[sp - 1] = st[sp - 1] - in->num; break;
        case OP_MUL_NUM: st[sp - 1] = st[sp - 1] * in->num; break;
        case OP_DIV_NUM: st[sp - 1] = in->num != 0 ? st[sp - 1] / in->num : NAN; break;
        case OP_ADD_COL: {
            double x;
            if (!col_num(&vals[in->col], &x)) return 1;
            st[sp - 1] = st[sp - 1] + x;
            break;
        }
        case OP_SUB_COL: {
            double x;
            if (!col_num(&vals[in->col], &x)) return 1;
            st[sp - 1] = st[sp - 1] - x;
            break;
        }
        case OP_MUL_COL: {
            double x;
            if (!col_num(&vals[in->col], &x)) return 1;
            st[sp - 1] = st[sp - 1] * x;
            break;
        }
        case OP_DIV_COL: {
            double x;
            if (!col_num(&vals[in->col], &x)) return 1;
            st[sp - 1] = x != 0 ? st[sp - 1] / x : NAN;
            break;
        }
        default:
            if (in->op >= OP_ABS) {
                sp -= in->nargs;
                st[sp] = apply_fn(in->op, in->nargs, &st[sp]);
                sp++;
            } else {
                sp--;
                st[sp - 1] = apply_bin(in->op, st[sp - 1], st[sp]);
            }
            break;
        }
    }
    *out = st[0];
    return 0;
}
