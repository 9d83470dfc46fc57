/* kafka_plugin.h — what the shape-kafka plugin's files share. */
#ifndef SHAPE_KAFKA_PLUGIN_H
#define SHAPE_KAFKA_PLUGIN_H

#include "shape/plugin.h"

extern const shape_command shape_kafka_cmd_broker;

#endif
