/* wire_private.h — what the wire decoder's files share (wire_decode.c, the
 * driver and renderer; wire_avro.c; wire_proto.c). Not a public interface.
 *
 * The decoder knows three things about every value it renders:
 *   - the ORIGINAL column (wire_column): the Arrow type the flat event was
 *     made from, which decides how the value is written (units, zone, scale);
 *   - the schema FIELD (wire_field): the registry copy's type for it, parsed
 *     from the Avro JSON or the proto3 text, which decides how it is read;
 *   - the decoded VALUE (wire_value): raw numbers and byte slices of the
 *     payload, in the field's units.
 */
#ifndef SHAPE_KAFKA_REGISTRY_WIRE_PRIVATE_H
#define SHAPE_KAFKA_REGISTRY_WIRE_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "shape/error.h"

/* ---- original columns ----------------------------------------------------- */

typedef enum wire_column_kind {
    WIRE_COL_NULL,
    WIRE_COL_BOOL,
    WIRE_COL_INT,    /* int8..int64, uint8..uint32 */
    WIRE_COL_UINT64,
    WIRE_COL_FLOAT,  /* float16, float32, float64 (see bits) */
    WIRE_COL_STRING,
    WIRE_COL_UUID,   /* fixed_size_binary(16) with extension arrow.uuid */
    WIRE_COL_BINARY,
    WIRE_COL_DECIMAL,
    WIRE_COL_DATE,
    WIRE_COL_TIME,
    WIRE_COL_TIMESTAMP
} wire_column_kind;

typedef struct wire_column {
    char *name;
    char *format;          /* Arrow format of the value type, for messages */
    wire_column_kind kind;
    int bits;              /* INT and FLOAT: 8, 16, 32 or 64 */
    int is_unsigned;       /* INT: uint8, uint16, uint32 */
    int digits;            /* TIME and TIMESTAMP: fraction digits of the unit (0, 3, 6, 9) */
    int zoned;             /* TIMESTAMP: the type has a time zone */
    int precision, scale;  /* DECIMAL */
} wire_column;

/* ---- schema fields -------------------------------------------------------- */

typedef enum wire_type {
    WIRE_T_NULL,   /* Avro "null" */
    WIRE_T_BOOL,   /* Avro boolean, proto bool */
    WIRE_T_INT32,  /* Avro int, proto int32 */
    WIRE_T_INT64,  /* Avro long, proto int64 */
    WIRE_T_UINT32, /* proto uint32 */
    WIRE_T_UINT64, /* proto uint64 */
    WIRE_T_FLOAT,
    WIRE_T_DOUBLE,
    WIRE_T_STRING,
    WIRE_T_BYTES
} wire_type;

typedef enum wire_logical {
    WIRE_L_NONE,
    WIRE_L_DATE,
    WIRE_L_TIME_MILLIS,
    WIRE_L_TIME_MICROS,
    WIRE_L_TIMESTAMP_MILLIS,
    WIRE_L_TIMESTAMP_MICROS,
    WIRE_L_LOCAL_TIMESTAMP_MILLIS,
    WIRE_L_LOCAL_TIMESTAMP_MICROS,
    WIRE_L_DECIMAL,
    WIRE_L_UUID
} wire_logical;

typedef struct wire_field {
    char *name;
    wire_type type;
    wire_logical logical;
    int nullable;          /* Avro union with "null"; proto `optional` */
    int null_branch;       /* Avro: the union index of "null" (0 or 1) */
    uint32_t number;       /* proto field number */
    int precision, scale;  /* Avro decimal */
} wire_field;

/* ---- decoded values --------------------------------------------------------- */

typedef struct wire_value {
    int set;            /* 0: null (Avro null branch, absent proto optional field) */
    int64_t i;          /* bool, int32, int64, uint32 */
    uint64_t u;         /* proto uint64 */
    double d;           /* float, double */
    const uint8_t *p;   /* string, bytes: into the message */
    size_t n;
} wire_value;

/* ---- per format ------------------------------------------------------------- */

/* Parse the registry's Avro record schema: *fields (malloc'ed array of *n,
 * free with wire_fields_free). SHAPE_EINVAL for a text that is not an Avro
 * record or a field type the decoder does not know. */
int wire_avro_parse(const char *text, uint32_t id, wire_field **fields, size_t *n, shape_err *err);
/* Decode one Avro binary record of the fields into values[0..n). */
int wire_avro_decode(const wire_field *fields, size_t n, uint32_t id, const uint8_t *p, size_t len,
                     wire_value *values, shape_err *err);

/* Parse the registry's proto3 text (its first message). */
int wire_proto_parse(const char *text, uint32_t id, wire_field **fields, size_t *n, shape_err *err);
/* Decode one Protobuf message of the fields into values[0..n): absent
 * optional fields are null, absent plain fields their proto3 default. */
int wire_proto_decode(const wire_field *fields, size_t n, uint32_t id, const uint8_t *p, size_t len,
                      wire_value *values, shape_err *err);

void wire_fields_free(wire_field *fields, size_t n);

#endif
