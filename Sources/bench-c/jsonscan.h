// jsonscan.c: a strict validating scan of JSON text (the floor of the JSON rows).
#include <stddef.h>
#include <stdint.h>

// 1 when bytes[0..<length] is one valid JSON document, else 0.
int jsonscan_validate(const uint8_t *bytes, size_t length);
