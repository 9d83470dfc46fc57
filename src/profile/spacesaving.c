/* spacesaving.c — the SpaceSaving summary of the most frequent values.
 *
 * Why: `top` must list the frequent values of a column in fixed memory (64
 * counters), with a guaranteed bound on every count, and must merge across
 * workers (reference/spec-core.md §1.10 "SpaceSaving").
 *
 * How: Metwally's Stream-Summary, so every operation is O(1):
 *   - entries live in a fixed array of `capacity` slots; an open-addressing
 *     index (linear probing, at most 1/8 full — 2 KiB for 64 counters, and
 *     the probe and backward-shift loops stay short; at 1/2 they were a fifth
 *     of the engine's time — backward-shift deletion) maps
 *     a key's canonical hash to its slot, and keys are compared in full on a
 *     hash match; each entry remembers its index slot (updated when the
 *     backward shift moves it), so removing it needs no probe; a miss
 *     puts the new key in the free slot its lookup ended on (the victim's
 *     old slot is emptied after), so it is probed for once;
 *   - entries are grouped in buckets of equal count; buckets form a list in
 *     ascending count order and each bucket's entries a list in the order they
 *     were last updated (head = least recently updated);
 *   - a hit moves the entry to the tail of the bucket count+1 (created after
 *     its bucket when missing); a miss when full takes the head of the first
 *     bucket (smallest count, least recently updated) as the victim, gives it
 *     the new key with error = its count, and increments it like a hit.
 * The list order (bucket by bucket, head to tail) is all the state there is
 * besides the counts: the binary state writes entries in that order and
 * rebuilds them by appending (shape_ss_append_raw_), so a loaded summary
 * evicts exactly as the saved one would have. The column profilers add
 * through prof_ss_add_ints/doubles/texts, a run of keys per call, the same
 * adds in the same order as the per-value shape_ss_add_*. Text keys are
 * owned copies in per-slot buffers that are reused when a victim takes a
 * new key (no allocation in steady state unless keys grow longer); within
 * a prof_ss_add_texts run a new key is compared in the caller's bytes and
 * copied only when the run ends (its room is made when it arrives, so a
 * failure comes at the same add as before), so the keys of a column of
 * distinct values that are evicted within the run are never copied.
 */
#include "shape/bytes.h"
#include "profile_internal.h"

#include <stdlib.h>
#include <string.h>

/* The add path (find, evict, increment, re-index) is a handful of small
 * steps; forced inline, each public add gets its own copy with the key
 * kind a constant, and no calls (their saved registers cost as much as the
 * steps). */
#define SS_INLINE static inline __attribute__((always_inline))

typedef struct ss_entry {
    int64_t count;
    int64_t error;
    uint64_t hash;
    int64_t i;
    double d;
    uint8_t *text;
    const uint8_t *key; /* the key's bytes: text, or the caller's until the run ends (text kind) */
    size_t text_len, text_cap;
    int32_t bucket, prev, next;
    uint32_t slot; /* where the index holds this entry (kept through moves) */
} ss_entry;

typedef struct ss_bucket {
    int64_t count;
    int32_t head, tail, prev, next;
} ss_bucket;

struct shape_spacesaving {
    shape_ss_kind kind;
    int capacity;
    size_t size;
    int64_t n;
    ss_entry *e;
    ss_bucket *b;
    int32_t *free_b; /* stack of free bucket slots */
    int n_free_b;
    int32_t first, last; /* bucket list, ascending count */
    int32_t *index;      /* entry slot or -1 */
    uint32_t mask;
    int borrowed; /* some entry's key is still the caller's bytes (within prof_ss_add_texts) */
};

/* ---- creation --------------------------------------------------------- */

int shape_ss_new(shape_ss_kind kind, int capacity, shape_spacesaving **out, shape_err *err)
{
    *out = NULL;
    if (capacity < 1 || capacity > SHAPE_SS_MAX_CAPACITY)
        return shape_err_set(err, SHAPE_EINVAL, "SpaceSaving capacity %d is outside 1..%d",
                             capacity, SHAPE_SS_MAX_CAPACITY);
    if ((int)kind < SHAPE_SS_INT || (int)kind > SHAPE_SS_TIMESTAMP)
        return shape_err_set(err, SHAPE_EINVAL, "unknown SpaceSaving key kind %d", (int)kind);
    uint32_t slots = 8;
    while (slots < 8u * (uint32_t)capacity) slots <<= 1; /* at most 1/8 full: short probe chains */
    shape_spacesaving *s = calloc(1, sizeof *s);
    if (s) {
        s->e = calloc((size_t)capacity, sizeof *s->e);
        s->b = calloc((size_t)capacity + 1, sizeof *s->b);
        s->free_b = malloc(((size_t)capacity + 1) * sizeof *s->free_b);
        s->index = malloc(slots * sizeof *s->index);
    }
    if (!s || !s->e || !s->b || !s->free_b || !s->index) {
        shape_ss_free(s);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory for a SpaceSaving summary");
    }
    s->kind = kind;
    s->capacity = capacity;
    s->mask = slots - 1;
    for (uint32_t i = 0; i < slots; i++) s->index[i] = -1;
    s->n_free_b = capacity + 1;
    for (int i = 0; i < capacity + 1; i++) s->free_b[i] = capacity - i; /* pop gives 0 first */
    s->first = s->last = -1;
    *out = s;
    return SHAPE_OK;
}

void shape_ss_free(shape_spacesaving *s)
{
    if (!s) return;
    if (s->e)
        for (int i = 0; i < s->capacity; i++) free(s->e[i].text);
    free(s->e);
    free(s->b);
    free(s->free_b);
    free(s->index);
    free(s);
}

shape_ss_kind shape_ss_key_kind(const shape_spacesaving *s) { return s->kind; }
int shape_ss_capacity(const shape_spacesaving *s) { return s->capacity; }
size_t shape_ss_size(const shape_spacesaving *s) { return s->size; }
int64_t shape_ss_total(const shape_spacesaving *s) { return s->n; }

int64_t shape_ss_min_count(const shape_spacesaving *s)
{
    if (s->size < (size_t)s->capacity || s->first < 0) return 0;
    return s->b[s->first].count;
}

/* ---- keys ----------------------------------------------------------------- */

typedef struct ss_key {
    int64_t i;
    double d;
    const uint8_t *text;
    size_t len;
} ss_key;

SS_INLINE int key_equal(shape_ss_kind kind, const ss_entry *e, const ss_key *k)
{
    switch (kind) {
    case SHAPE_SS_DOUBLE: return e->d == k->d;
    case SHAPE_SS_TEXT: return e->text_len == k->len && shape_bytes_equal(e->key, k->text, k->len);
    default: return e->i == k->i;
    }
}

static int cmp_bytes(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

/* Deterministic key order: numbers by value, text by bytes. */
static int key_cmp(shape_ss_kind kind, const shape_ss_item *a, const shape_ss_item *b)
{
    switch (kind) {
    case SHAPE_SS_DOUBLE: return a->d < b->d ? -1 : (a->d > b->d ? 1 : 0);
    case SHAPE_SS_TEXT: return cmp_bytes(a->text, a->text_len, b->text, b->text_len);
    default: return a->i < b->i ? -1 : (a->i > b->i ? 1 : 0);
    }
}

/* ---- index ---------------------------------------------------------------- */

/* The entry holding k, or -1 with *empty = the free slot that ended the
 * probe: where k goes in (index_put). */
SS_INLINE int32_t index_find(const shape_spacesaving *s, shape_ss_kind kind, uint64_t hash, const ss_key *k,
                             uint32_t *empty)
{
    uint32_t slot = (uint32_t)hash & s->mask;
    for (;;) {
        int32_t at = s->index[slot];
        if (at < 0) {
            *empty = slot;
            return -1;
        }
        const ss_entry *e = &s->e[at];
        if (e->hash == hash && key_equal(kind, e, k)) return at;
        slot = (slot + 1) & s->mask;
    }
}

/* Index entry `at` at `slot`, the free slot index_find found for its key. */
SS_INLINE void index_put(shape_spacesaving *s, int32_t at, uint32_t slot)
{
    s->index[slot] = at;
    s->e[at].slot = slot;
}

/* Empty slot i (backward shift: later entries of its cluster that may move
 * up fill the hole). */
SS_INLINE void index_remove_slot(shape_spacesaving *s, uint32_t i)
{
    uint32_t j = i;
    for (;;) {
        j = (j + 1) & s->mask;
        int32_t moved = s->index[j];
        if (moved < 0) break;
        uint32_t home = (uint32_t)s->e[moved].hash & s->mask;
        /* The entry at j may fill the hole at i unless its home lies
         * cyclically in (i, j], i.e. is nearer to j than i is. */
        int stays = ((j - home) & s->mask) < ((j - i) & s->mask);
        if (!stays) {
            s->index[i] = moved;
            s->e[moved].slot = i;
            i = j;
        }
    }
    s->index[i] = -1;
}

/* ---- buckets -------------------------------------------------------------- */

SS_INLINE int32_t bucket_new_after(shape_spacesaving *s, int32_t after, int64_t count)
{
    int32_t nb = s->free_b[--s->n_free_b];
    ss_bucket *b = &s->b[nb];
    b->count = count;
    b->head = b->tail = -1;
    b->prev = after;
    b->next = after >= 0 ? s->b[after].next : s->first;
    if (b->prev >= 0)
        s->b[b->prev].next = nb;
    else
        s->first = nb;
    if (b->next >= 0)
        s->b[b->next].prev = nb;
    else
        s->last = nb;
    return nb;
}

SS_INLINE void bucket_release(shape_spacesaving *s, int32_t at)
{
    ss_bucket *b = &s->b[at];
    if (b->prev >= 0)
        s->b[b->prev].next = b->next;
    else
        s->first = b->next;
    if (b->next >= 0)
        s->b[b->next].prev = b->prev;
    else
        s->last = b->prev;
    s->free_b[s->n_free_b++] = at;
}

SS_INLINE void entry_append(shape_spacesaving *s, int32_t at, int32_t bucket)
{
    ss_entry *e = &s->e[at];
    ss_bucket *b = &s->b[bucket];
    e->bucket = bucket;
    e->count = b->count;
    e->next = -1;
    e->prev = b->tail;
    if (b->tail >= 0)
        s->e[b->tail].next = at;
    else
        b->head = at;
    b->tail = at;
}

/* Unlink from its bucket; frees the bucket when it empties. */
SS_INLINE void entry_detach(shape_spacesaving *s, int32_t at)
{
    ss_entry *e = &s->e[at];
    ss_bucket *b = &s->b[e->bucket];
    if (e->prev >= 0)
        s->e[e->prev].next = e->next;
    else
        b->head = e->next;
    if (e->next >= 0)
        s->e[e->next].prev = e->prev;
    else
        b->tail = e->prev;
    if (b->head < 0) bucket_release(s, e->bucket);
}

/* count + 1, and the entry becomes the most recently updated of its count. */
SS_INLINE void entry_increment(shape_spacesaving *s, int32_t at)
{
    ss_entry *e = &s->e[at];
    int32_t bi = e->bucket;
    ss_bucket *b = &s->b[bi];
    int64_t want = b->count + 1;
    int32_t nb = b->next;
    if (b->head == at && b->tail == at && (nb < 0 || s->b[nb].count != want)) {
        b->count = want; /* alone in its bucket: the bucket moves up in place */
        e->count = want;
        return;
    }
    if (nb < 0 || s->b[nb].count != want) nb = bucket_new_after(s, bi, want);
    entry_detach(s, at);
    entry_append(s, at, nb);
}

/* Slot for a new entry of count 1 (not full): tail of the count-1 bucket. */
SS_INLINE void entry_place_new(shape_spacesaving *s, int32_t at)
{
    int32_t b = s->first;
    if (b < 0 || s->b[b].count != 1) b = bucket_new_after(s, -1, 1);
    entry_append(s, at, b);
}

/* Store key k in slot `at`: text is copied into the slot's buffer, or
 * with `borrow` only room is made for it there and the copy is left to
 * own_keys (a constant at each call). */
SS_INLINE int entry_set_key(shape_spacesaving *s, shape_ss_kind kind, int32_t at, const ss_key *k, int borrow,
                            shape_err *err)
{
    ss_entry *e = &s->e[at];
    if (kind == SHAPE_SS_TEXT) {
        if (k->len > e->text_cap || !e->text) {
            size_t cap = k->len < 16 ? 16 : k->len;
            uint8_t *p = realloc(e->text, cap);
            if (!p) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for a top-value key of %zu bytes", k->len);
            e->text = p;
            e->text_cap = cap;
        }
        if (borrow) {
            e->key = k->text;
            s->borrowed = 1;
        } else {
            if (k->len) memcpy(e->text, k->text, k->len);
            e->key = e->text;
        }
        e->text_len = k->len;
    } else {
        e->i = k->i;
        e->d = k->d;
    }
    return SHAPE_OK;
}

/* Copy the keys still borrowed into their slots' buffers (room was made
 * when each arrived, so this cannot fail). */
static void own_keys(shape_spacesaving *s)
{
    if (!s->borrowed) return;
    for (size_t i = 0; i < s->size; i++) {
        ss_entry *e = &s->e[i];
        if (e->key != e->text) {
            if (e->text_len) memcpy(e->text, e->key, e->text_len);
            e->key = e->text;
        }
    }
    s->borrowed = 0;
}

/* ---- adding --------------------------------------------------------------- */

/* The victim of a miss when full (the head of the first bucket, so its
 * prev is -1) takes count + 1: entry_increment with what being the head
 * tells in advance. */
SS_INLINE void victim_increment(shape_spacesaving *s, int32_t at)
{
    ss_entry *e = &s->e[at];
    int32_t bi = e->bucket;
    ss_bucket *b = &s->b[bi];
    int64_t want = b->count + 1;
    int32_t nb = b->next, after = e->next;
    int next_fits = nb >= 0 && s->b[nb].count == want;
    if (after < 0 && !next_fits) {
        b->count = want; /* alone in its bucket: the bucket moves up in place */
        e->count = want;
        return;
    }
    if (!next_fits) nb = bucket_new_after(s, bi, want);
    b->head = after; /* unlink the head */
    if (after >= 0)
        s->e[after].prev = -1;
    else
        bucket_release(s, bi); /* (was alone: tail and head both gone) */
    entry_append(s, at, nb);
}

/* kind: the summary's key kind, a constant at each call (s->kind); borrow:
 * a new text key is copied by own_keys (prof_ss_add_texts' run), not here */
SS_INLINE int ss_add(shape_spacesaving *s, shape_ss_kind kind, const ss_key *k, uint64_t hash, int borrow,
                     shape_err *err)
{
    uint32_t empty;
    int32_t at = index_find(s, kind, hash, k, &empty);
    if (at >= 0) {
        entry_increment(s, at);
        s->n++;
        return SHAPE_OK;
    }
    if (s->size < (size_t)s->capacity) {
        at = (int32_t)s->size;
        SHAPE_RETURN_NOT_OK(entry_set_key(s, kind, at, k, borrow, err));
        s->size++;
        s->e[at].hash = hash;
        s->e[at].error = 0;
        entry_place_new(s, at);
        index_put(s, at, empty);
        s->n++;
        return SHAPE_OK;
    }
    at = s->b[s->first].head; /* smallest count, least recently updated */
    SHAPE_RETURN_NOT_OK(entry_set_key(s, kind, at, k, borrow, err));
    ss_entry *e = &s->e[at];
    /* Re-index: the new key goes to the free slot its probe ended on, then
     * the old key's slot is emptied by backward shift (a move of the new
     * key included). The index is a valid table at each step, one entry
     * more than the capacity for a moment, which the 1/8 load leaves room
     * for; this saves probing again for a free slot. */
    uint32_t old_slot = e->slot;
    e->hash = hash;
    index_put(s, at, empty);
    index_remove_slot(s, old_slot);
    e->error = e->count;
    victim_increment(s, at);
    s->n++;
    return SHAPE_OK;
}

void shape_ss_add_int(shape_spacesaving *s, int64_t v, uint64_t hash)
{
    ss_key k = {.i = v};
    /* int and timestamp keys behave alike; any other kind as before (generic) */
    if (s->kind == SHAPE_SS_INT || s->kind == SHAPE_SS_TIMESTAMP)
        (void)ss_add(s, SHAPE_SS_INT, &k, hash, 0, NULL);
    else
        (void)ss_add(s, s->kind, &k, hash, 0, NULL);
}

void shape_ss_add_double(shape_spacesaving *s, double v, uint64_t hash)
{
    ss_key k = {.d = v == 0.0 ? 0.0 : v};
    if (s->kind == SHAPE_SS_DOUBLE)
        (void)ss_add(s, SHAPE_SS_DOUBLE, &k, hash, 0, NULL);
    else
        (void)ss_add(s, s->kind, &k, hash, 0, NULL);
}

int shape_ss_add_text(shape_spacesaving *s, const void *p, size_t n, uint64_t hash, shape_err *err)
{
    ss_key k = {.text = p, .len = n};
    if (s->kind == SHAPE_SS_TEXT) return ss_add(s, SHAPE_SS_TEXT, &k, hash, 0, err);
    return ss_add(s, s->kind, &k, hash, 0, err);
}

void prof_ss_add_ints(shape_spacesaving *s, const int64_t *keys, const uint64_t *hashes, size_t n)
{
    if (s->kind != SHAPE_SS_INT && s->kind != SHAPE_SS_TIMESTAMP) {
        for (size_t i = 0; i < n; i++) shape_ss_add_int(s, keys[i], hashes[i]);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        ss_key k = {.i = keys[i]};
        (void)ss_add(s, SHAPE_SS_INT, &k, hashes[i], 0, NULL);
    }
}

void prof_ss_add_doubles(shape_spacesaving *s, const double *keys, const uint64_t *hashes, size_t n)
{
    if (s->kind != SHAPE_SS_DOUBLE) {
        for (size_t i = 0; i < n; i++) shape_ss_add_double(s, keys[i], hashes[i]);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        ss_key k = {.d = keys[i] == 0.0 ? 0.0 : keys[i]};
        (void)ss_add(s, SHAPE_SS_DOUBLE, &k, hashes[i], 0, NULL);
    }
}

int prof_ss_add_texts(shape_spacesaving *s, const prof_text_key *keys, size_t n, shape_err *err)
{
    if (s->kind != SHAPE_SS_TEXT) {
        for (size_t i = 0; i < n; i++) SHAPE_RETURN_NOT_OK(shape_ss_add_text(s, keys[i].p, keys[i].len, keys[i].hash, err));
        return SHAPE_OK;
    }
    /* New keys stay the caller's bytes until the run ends: most of a
     * column of distinct values is evicted again within the run and never
     * copied */
    int rc = SHAPE_OK;
    for (size_t i = 0; i < n && rc == SHAPE_OK; i++) {
        ss_key k = {.text = keys[i].p, .len = keys[i].len};
        rc = ss_add(s, SHAPE_SS_TEXT, &k, keys[i].hash, 1, err);
    }
    own_keys(s);
    return rc;
}

/* ---- queries -------------------------------------------------------------- */

static void fill_item(const shape_spacesaving *s, int32_t at, shape_ss_item *it)
{
    const ss_entry *e = &s->e[at];
    it->count = e->count;
    it->error = e->error;
    it->i = e->i;
    it->d = e->d;
    it->text = s->kind == SHAPE_SS_TEXT ? e->text : NULL;
    it->text_len = s->kind == SHAPE_SS_TEXT ? e->text_len : 0;
}

size_t shape_ss_items_ordered_(const shape_spacesaving *s, shape_ss_item *out)
{
    size_t n = 0;
    for (int32_t b = s->first; b >= 0; b = s->b[b].next)
        for (int32_t at = s->b[b].head; at >= 0; at = s->e[at].next) fill_item(s, at, &out[n++]);
    return n;
}

/* qsort has no context argument: sort (kind, item) pairs instead. */
typedef struct sort_rec {
    shape_ss_kind kind;
    shape_ss_item item;
    int from_src; /* merge: which summary the key comes from */
} sort_rec;

static int cmp_desc(const void *pa, const void *pb)
{
    const sort_rec *a = pa, *b = pb;
    if (a->item.count != b->item.count) return a->item.count > b->item.count ? -1 : 1;
    return key_cmp(a->kind, &a->item, &b->item);
}

static int cmp_asc(const void *pa, const void *pb)
{
    const sort_rec *a = pa, *b = pb;
    if (a->item.count != b->item.count) return a->item.count < b->item.count ? -1 : 1;
    return key_cmp(a->kind, &a->item, &b->item);
}

size_t shape_ss_items(const shape_spacesaving *s, shape_ss_item *out)
{
    sort_rec recs[SHAPE_SS_CAPACITY];
    sort_rec *r = s->size <= SHAPE_SS_CAPACITY ? recs : malloc(s->size * sizeof *r);
    size_t n = 0;
    if (!r) { /* cannot sort: list order is still a valid answer */
        return shape_ss_items_ordered_(s, out);
    }
    for (int32_t b = s->first; b >= 0; b = s->b[b].next)
        for (int32_t at = s->b[b].head; at >= 0; at = s->e[at].next) {
            r[n].kind = s->kind;
            fill_item(s, at, &r[n].item);
            n++;
        }
    qsort(r, n, sizeof *r, cmp_desc);
    for (size_t i = 0; i < n; i++) out[i] = r[i].item;
    if (r != recs) free(r);
    return n;
}

/* ---- raw append (state load, merge) -------------------------------------- */

int shape_ss_append_raw_(shape_spacesaving *s, const shape_ss_item *it, shape_err *err)
{
    if (s->size >= (size_t)s->capacity)
        return shape_err_set(err, SHAPE_EINVAL, "more top-value entries than the capacity %d", s->capacity);
    if (it->count < 1 || it->error < 0 || it->error >= it->count)
        return shape_err_set(err, SHAPE_EINVAL, "top-value entry with count %lld and error %lld",
                             (long long)it->count, (long long)it->error);
    if (s->last >= 0 && s->b[s->last].count > it->count)
        return shape_err_set(err, SHAPE_EINVAL, "top-value entries out of count order");
    ss_key k = {.i = it->i, .d = it->d == 0.0 ? 0.0 : it->d, .text = it->text, .len = it->text_len};
    uint64_t hash;
    switch (s->kind) {
    case SHAPE_SS_DOUBLE:
        if (k.d != k.d) return shape_err_set(err, SHAPE_EINVAL, "NaN top-value key");
        hash = prof_hash_double(k.d);
        break;
    case SHAPE_SS_TEXT: hash = prof_hash_bytes(SHAPE_HASH_STRING, k.text, k.len); break;
    case SHAPE_SS_TIMESTAMP: hash = prof_hash_timestamp(k.i); break;
    default: hash = prof_hash_int(k.i); break;
    }
    uint32_t empty;
    if (index_find(s, s->kind, hash, &k, &empty) >= 0) return shape_err_set(err, SHAPE_EINVAL, "duplicate top-value key");
    int32_t at = (int32_t)s->size;
    SHAPE_RETURN_NOT_OK(entry_set_key(s, s->kind, at, &k, 0, err));
    s->size++;
    ss_entry *e = &s->e[at];
    e->hash = hash;
    e->error = it->error;
    int32_t b = s->last;
    if (b < 0 || s->b[b].count != it->count) b = bucket_new_after(s, s->last, it->count);
    entry_append(s, at, b);
    index_put(s, at, empty);
    return SHAPE_OK;
}

void shape_ss_set_total_(shape_spacesaving *s, int64_t n) { s->n = n; }

/* ---- merge ---------------------------------------------------------------- */

static int64_t lookup_count(const shape_spacesaving *s, const shape_ss_item *it, int64_t *error)
{
    ss_key k = {.i = it->i, .d = it->d, .text = it->text, .len = it->text_len};
    uint64_t hash;
    switch (s->kind) {
    case SHAPE_SS_DOUBLE: hash = prof_hash_double(k.d); break;
    case SHAPE_SS_TEXT: hash = prof_hash_bytes(SHAPE_HASH_STRING, k.text, k.len); break;
    case SHAPE_SS_TIMESTAMP: hash = prof_hash_timestamp(k.i); break;
    default: hash = prof_hash_int(k.i); break;
    }
    uint32_t empty;
    int32_t at = index_find(s, s->kind, hash, &k, &empty);
    if (at < 0) return -1;
    *error = s->e[at].error;
    return s->e[at].count;
}

static void swap_internals(shape_spacesaving *a, shape_spacesaving *b)
{
    shape_spacesaving t = *a;
    *a = *b;
    *b = t;
}

int shape_ss_merge(shape_spacesaving *dst, const shape_spacesaving *src, shape_err *err)
{
    if (dst->kind != src->kind || dst->capacity != src->capacity)
        return shape_err_set(err, SHAPE_EINVAL, "cannot merge top-value summaries of different kinds or capacities");
    int64_t m1 = shape_ss_min_count(dst), m2 = shape_ss_min_count(src);
    size_t total = dst->size + src->size;
    sort_rec *r = malloc((total ? total : 1) * sizeof *r);
    if (!r) return shape_err_set(err, SHAPE_ENOMEM, "out of memory merging top values");
    size_t n = 0;
    for (int32_t at = 0; at < (int32_t)dst->size; at++) {
        sort_rec *x = &r[n++];
        x->kind = dst->kind;
        x->from_src = 0;
        fill_item(dst, at, &x->item);
        int64_t e2 = 0, c2 = lookup_count(src, &x->item, &e2);
        if (c2 < 0) c2 = e2 = m2;
        x->item.count += c2;
        x->item.error += e2;
    }
    for (int32_t at = 0; at < (int32_t)src->size; at++) {
        sort_rec *x = &r[n];
        x->kind = src->kind;
        x->from_src = 1;
        fill_item(src, at, &x->item);
        int64_t e1 = 0;
        if (lookup_count(dst, &x->item, &e1) >= 0) continue; /* counted above */
        x->item.count += m1;
        x->item.error += m1;
        n++;
    }
    qsort(r, n, sizeof *r, cmp_desc);
    if (n > (size_t)dst->capacity) n = (size_t)dst->capacity;
    qsort(r, n, sizeof *r, cmp_asc); /* recency: smaller key = less recently updated */
    shape_spacesaving *fresh = NULL;
    int rc = shape_ss_new(dst->kind, dst->capacity, &fresh, err);
    for (size_t i = 0; rc == SHAPE_OK && i < n; i++) rc = shape_ss_append_raw_(fresh, &r[i].item, err);
    free(r);
    if (rc != SHAPE_OK) {
        shape_ss_free(fresh);
        return rc;
    }
    fresh->n = dst->n + src->n;
    swap_internals(dst, fresh);
    shape_ss_free(fresh);
    return SHAPE_OK;
}
