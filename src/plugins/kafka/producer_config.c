/* producer_config.c — the ordered name=value settings a producer client is
 * made from (see producer_client.h).
 *
 * Why: the emitter decides the settings (defaults, the user's `config`, the
 * URI's servers) once, whichever client takes them, and keeps them to make
 * a fresh client after a fatal error; FakeProducer records them so tests can
 * check the precedence.
 * How: a small growable array; setting a name again replaces its value in
 * place (first position kept). Values may be resolved secrets, so they are
 * wiped before being freed.
 */
#include <stdlib.h>
#include <string.h>

#include "producer_client.h"
#include "shape/credref.h"

static void setting_free(shape_kafka_producer_setting *s)
{
    free(s->name);
    shape_secret_free(s->value); /* wipes, then frees */
    s->name = s->value = NULL;
}

int shape_kafka_producer_config_set(shape_kafka_producer_config *cfg, const char *name, const char *value,
                                    int from_credential, shape_err *err)
{
    char *v = strdup(value);
    if (!v) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t i = 0; i < cfg->n; i++)
        if (strcmp(cfg->items[i].name, name) == 0) {
            shape_secret_free(cfg->items[i].value);
            cfg->items[i].value = v;
            cfg->items[i].from_credential = from_credential;
            return SHAPE_OK;
        }
    if (cfg->n == cfg->cap) {
        size_t cap = cfg->cap ? cfg->cap * 2 : 8;
        shape_kafka_producer_setting *items = realloc(cfg->items, cap * sizeof *items);
        if (!items) {
            shape_secret_free(v);
            return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        }
        cfg->items = items;
        cfg->cap = cap;
    }
    char *n = strdup(name);
    if (!n) {
        shape_secret_free(v);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    cfg->items[cfg->n++] = (shape_kafka_producer_setting){n, v, from_credential};
    return SHAPE_OK;
}

const char *shape_kafka_producer_config_get(const shape_kafka_producer_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->n; i++)
        if (strcmp(cfg->items[i].name, name) == 0) return cfg->items[i].value;
    return NULL;
}

int shape_kafka_producer_config_copy(shape_kafka_producer_config *dst, const shape_kafka_producer_config *src,
                                     shape_err *err)
{
    for (size_t i = 0; i < src->n; i++) {
        const shape_kafka_producer_setting *s = &src->items[i];
        if (shape_kafka_producer_config_set(dst, s->name, s->value, s->from_credential, err) != SHAPE_OK) {
            shape_kafka_producer_config_free(dst);
            return err->code;
        }
    }
    return SHAPE_OK;
}

void shape_kafka_producer_config_free(shape_kafka_producer_config *cfg)
{
    for (size_t i = 0; i < cfg->n; i++) setting_free(&cfg->items[i]);
    free(cfg->items);
    cfg->items = NULL;
    cfg->n = cfg->cap = 0;
}
