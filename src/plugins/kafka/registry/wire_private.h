/* wire_private.h — what the wire decoder's files share (wire_decode.c, the
 * driver and renderer; wire_avro.c; wire_proto.c). Not a public interface.
 *
 * The decoder knows three things about every value it renders:
 *   - the ORIGINAL column (shape_kafka_wire_column): the Arrow type the flat event was
 *     made from, which decides how the value is written (units, zone, scale);
 *   - the schema FIELD (shape_kafka_wire_field): the registry copy's type for it, parsed
 *     from the Avro JSON or the proto3 text, which decides how it is read;
 *   - the decoded VALUE (shape_kafka_wire_value): raw numbers and byte slices of the
 *     payload, in the field's units.
 */
#ifndef SHAPE_KAFKA_REGISTRY_WIRE_PRIVATE_H
#define SHAPE_KAFKA_REGISTRY_WIRE_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "shape/error.h"

/* ---- original columns ----------------------------------------------------- */

typedef enum shape_kafka_wire_column_kind {
    SHAPE_KAFKA_WIRE_COL_NULL,
    SHAPE_KAFKA_WIRE_COL_BOOL,
    SHAPE_KAFKA_WIRE_COL_INT,    /* int8..int64, uint8..uint32 */
    SHAPE_KAFKA_WIRE_COL_UINT64,
    SHAPE_KAFKA_WIRE_COL_FLOAT,  /* float16, float32, float64 (see bits) */
    SHAPE_KAFKA_WIRE_COL_STRING,
    SHAPE_KAFKA_WIRE_COL_UUID,   /* fixed_size_binary(16) with extension arrow.uuid */
    SHAPE_KAFKA_WIRE_COL_BINARY,
    SHAPE_KAFKA_WIRE_COL_DECIMAL,
    SHAPE_KAFKA_WIRE_COL_DATE,
    SHAPE_KAFKA_WIRE_COL_TIME,
    SHAPE_KAFKA_WIRE_COL_TIMESTAMP
} shape_kafka_wire_column_kind;

typedef struct shape_kafka_wire_column {
    char *name;
    char *format;          /* Arrow format of the value type, for messages */
    shape_kafka_wire_column_kind kind;
    int bits;              /* INT and FLOAT: 8, 16, 32 or 64 */
    int is_unsigned;       /* INT: uint8, uint16, uint32 */
    int digits;            /* TIME and TIMESTAMP: fraction digits of the unit (0, 3, 6, 9) */
    int zoned;             /* TIMESTAMP: the type has a time zone */
    int precision, scale;  /* DECIMAL */
} shape_kafka_wire_column;

/* ---- schema fields -------------------------------------------------------- */

typedef enum shape_kafka_wire_type {
    SHAPE_KAFKA_WIRE_T_NULL,   /* Avro "null" */
    SHAPE_KAFKA_WIRE_T_BOOL,   /* Avro boolean, proto bool */
    SHAPE_KAFKA_WIRE_T_INT32,  /* Avro int, proto int32 */
    SHAPE_KAFKA_WIRE_T_INT64,  /* Avro long, proto int64 */
    SHAPE_KAFKA_WIRE_T_UINT32, /* proto uint32 */
    SHAPE_KAFKA_WIRE_T_UINT64, /* proto uint64 */
    SHAPE_KAFKA_WIRE_T_FLOAT,
    SHAPE_KAFKA_WIRE_T_DOUBLE,
    SHAPE_KAFKA_WIRE_T_STRING,
    SHAPE_KAFKA_WIRE_T_BYTES
} shape_kafka_wire_type;

typedef enum shape_kafka_wire_logical {
    SHAPE_KAFKA_WIRE_L_NONE,
    SHAPE_KAFKA_WIRE_L_DATE,
    SHAPE_KAFKA_WIRE_L_TIME_MILLIS,
    SHAPE_KAFKA_WIRE_L_TIME_MICROS,
    SHAPE_KAFKA_WIRE_L_TIMESTAMP_MILLIS,
    SHAPE_KAFKA_WIRE_L_TIMESTAMP_MICROS,
    SHAPE_KAFKA_WIRE_L_LOCAL_TIMESTAMP_MILLIS,
    SHAPE_KAFKA_WIRE_L_LOCAL_TIMESTAMP_MICROS,
    SHAPE_KAFKA_WIRE_L_DECIMAL,
    SHAPE_KAFKA_WIRE_L_UUID
} shape_kafka_wire_logical;

typedef struct shape_kafka_wire_field {
    char *name;
    shape_kafka_wire_type type;
    shape_kafka_wire_logical logical;
    int nullable;          /* Avro union with "null"; proto `optional` */
    int null_branch;       /* Avro: the union index of "null" (0 or 1) */
    uint32_t number;       /* proto field number */
    int precision, scale;  /* Avro decimal */
} shape_kafka_wire_field;

/* ---- decoded values --------------------------------------------------------- */

typedef struct shape_kafka_wire_value {
    int set;            /* 0: null (Avro null branch, absent proto optional field) */
    int64_t i;          /* bool, int32, int64, uint32 */
    uint64_t u;         /* proto uint64 */
    double d;           /* float, double */
    const uint8_t *p;   /* string, bytes: into the message */
    size_t n;
} shape_kafka_wire_value;

/* ---- per format ------------------------------------------------------------- */

/* Parse the registry's Avro record schema: *fields (malloc'ed array of *n,
 * free with shape_kafka_wire_fields_free). SHAPE_EINVAL for a text that is not an Avro
 * record or a field type the decoder does not know. */
int shape_kafka_wire_avro_parse(const char *text, uint32_t id, shape_kafka_wire_field **fields, size_t *n, shape_err *err);
/* Decode one Avro binary record of the fields into values[0..n). */
int shape_kafka_wire_avro_decode(const shape_kafka_wire_field *fields, size_t n, uint32_t id, const uint8_t *p, size_t len,
                     shape_kafka_wire_value *values, shape_err *err);

/* Parse the registry's proto3 text (its first message). */
int shape_kafka_wire_proto_parse(const char *text, uint32_t id, shape_kafka_wire_field **fields, size_t *n, shape_err *err);
/* Decode one Protobuf message of the fields into values[0..n): absent
 * optional fields are null, absent plain fields their proto3 default. */
int shape_kafka_wire_proto_decode(const shape_kafka_wire_field *fields, size_t n, uint32_t id, const uint8_t *p, size_t len,
                      shape_kafka_wire_value *values, shape_err *err);

void shape_kafka_wire_fields_free(shape_kafka_wire_field *fields, size_t n);

#endif
