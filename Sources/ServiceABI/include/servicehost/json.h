/*
 * servicehost/json.h — JSON payloads parsed once by the host, for every service.
 *
 * Rationale: a push payload goes to many services. Parsing it once in the host
 * and handing each service the same read-only tape keeps the cost of an event
 * independent of how many services read its payload. The tape is a flat array
 * of nodes in document order (like simdjson's tape): a container's children
 * follow it, and `next` jumps over a node with all its descendants.
 */
#ifndef SERVICEHOST_JSON_H
#define SERVICEHOST_JSON_H

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Node types. */
typedef enum sh_json_type {
    SH_JSON_NULL = 0,
    SH_JSON_FALSE = 1,
    SH_JSON_TRUE = 2,
    SH_JSON_NUMBER = 3,
    SH_JSON_STRING = 4,
    SH_JSON_ARRAY = 5,
    SH_JSON_OBJECT = 6,
} sh_json_type;

/* One value. An array's `count` elements follow it; an object's `count`
 * members follow it as key, value, key, value… where each key is a
 * SH_JSON_STRING node.
 * An element of sh_json.nodes, so it has no size or version of its own (the
 * array's stride must be fixed): its layout is frozen (layout.h) and never
 * grows; a new kind of node would come with a new sh_json version.
 * Owner, lifetime and thread: those of the sh_json it belongs to. */
typedef struct sh_json_node {
    /* An sh_json_type. */
    uint32_t type;
    /* Arrays: elements; objects: members; others: 0. */
    uint32_t count;
    /* The index of the first node after this one and its descendants. */
    uint32_t next;
    /* Reserved, zero. */
    uint32_t reserved;
    /* Strings: the unescaped UTF-8 bytes, NUL-terminated (a string may also
     * hold NUL bytes: use length). NULL for other types. */
    const char *string;
    /* Strings: length in bytes, without the terminating NUL. */
    size_t length;
    /* Numbers: the value. */
    double number;
} sh_json_node;

#define SH_JSON_VERSION 1u
/* sizeof(sh_json) in version 1, frozen (layout.h). */
#define SH_JSON_SIZE_V1 24u

/* A parsed document. nodes[0] is the root.
 * Owner: the host. Valid: as long as the event data that points to it.
 * Thread: read-only, any thread during that time: the tape never changes, so
 * a service may hand it to a thread of its own, as long as that thread is done
 * with it before the event data expires. (The struct that points to it says
 * where that struct itself may be read: usually the thread that received the
 * event.) */
typedef struct sh_json {
    /* sizeof(sh_json) as the host compiled it. */
    uint32_t size;
    /* SH_JSON_VERSION as the host compiled it. */
    uint32_t version;
    /* The nodes, in document order. */
    const sh_json_node *nodes;
    /* How many. */
    size_t count;
} sh_json;

#ifdef __cplusplus
}
#endif

#endif /* SERVICEHOST_JSON_H */
