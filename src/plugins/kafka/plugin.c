/* plugin.c — the shape-kafka plugin's description: the kafka:// stream
 * source and emitter, and the `shape broker` and `shape schema-registry`
 * commands.
 *
 * This is the module's only exported symbol; everything else is static or
 * lives in the plugin's own files. Loading the module loads librdkafka; the
 * core never links it.
 */
#include <librdkafka/rdkafka.h>

#include "kafka_plugin.h"
#include "kafka_uri.h"

static int kafka_check_uri(const char *uri, shape_err *err)
{
    shape_kafka_uri parsed;
    SHAPE_RETURN_NOT_OK(shape_kafka_uri_parse(uri, &parsed, err));
    shape_kafka_uri_free(&parsed);
    return SHAPE_OK;
}

static const char *const kafka_schemes[] = {"kafka", NULL};

static const shape_source_type kafka_source = {
    .name = "kafka",
    .schemes = kafka_schemes,
    .summary = "Read a Kafka topic as Arrow micro-batches with self-kept offsets.",
    .check_uri = kafka_check_uri,
    .open = shape_kafka_source_open,
    .open_stoppable = shape_kafka_source_open_stoppable,
};

static const shape_source_type *const sources[] = {&kafka_source, NULL};
static const shape_emitter_type *const emitters[] = {&shape_kafka_emitter, NULL};
static const shape_command *const commands[] = {&shape_kafka_cmd_broker, &shape_kafka_cmd_schema_registry, NULL};

static const shape_plugin kafka_plugin = {
    .abi_version = SHAPE_PLUGIN_ABI_VERSION,
    .flags = SHAPE_PLUGIN_BUNDLED,
    .name = "shape-kafka",
    .version = SHAPE_VERSION,
    .summary = "kafka:// stream source and emitter, and the embedded broker (librdkafka)",
    .sources = sources,
    .emitters = emitters,
    .commands = commands,
};

SHAPE_PLUGIN_EXPORT const shape_plugin *shape_plugin_entry(void) { return &kafka_plugin; }
