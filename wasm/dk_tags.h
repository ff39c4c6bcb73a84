/*
 * dk_tags.h - the tags of darmok JSON (docs/FORMAT.md), once: the reader
 * matches them (dk_json_read.c find_tag) and the writer writes them
 * (dk_json_write.c), both from here. Each tag is one line
 *   #define DK_TAG_<ID>_S "<name after the $>"   its form
 * so a simple parser can read the list; enum dk_tag numbers them in that
 * order. The binary kinds are tags too, "$" + dk_bytes_name[kind].
 */
#ifndef DK_TAGS_H
#define DK_TAGS_H

#include "dk_tape.h"

#define DK_TAG_UNDEFINED_S "undefined" /* {"$undefined":0}: undefined */
#define DK_TAG_NUMBER_S "Number"       /* {"$Number":"NaN"} and Infinity, -Infinity, -0 */
#define DK_TAG_BIGINT_S "BigInt"       /* {"$BigInt":"digits"} */
#define DK_TAG_DATE_S "Date"           /* {"$Date":"ISO string" or null} */
#define DK_TAG_REGEXP_S "RegExp"       /* {"$RegExp":[source, flags]} */
#define DK_TAG_MAP_S "Map"             /* {"$Map":[[k, v], ...]} */
#define DK_TAG_SET_S "Set"             /* {"$Set":[...]} */
#define DK_TAG_NULLPROTO_S "NullProto" /* {"$NullProto":{...}}: an object without prototype */
#define DK_TAG_ERROR_S "Error"         /* {"$Error":{"name", "message", ...}} */
#define DK_TAG_HOLE_S "hole"           /* {"$hole":n}: n empty slots of an array */
#define DK_TAG_REF_S "ref"             /* {"$ref":i}: the i-th referenceable value again */

/*
 * The meta keys of an object, each one line
 *   #define DK_META_<ID>_S "<key>"
 * like the tags: "$" names an instance's class ({"$":"Post", ...}), "$v"
 * its version right after, and a plain object's key that starts with "$"
 * is written with one more "$" first ("$$x" for "$x").
 */
#define DK_META_CLASS_S "$"
#define DK_META_VERSION_S "$v"
#define DK_META_ESCAPE_S "$$"

/* The tags in the order above; a binary kind k is DK_TAG_BYTES + k. */
enum dk_tag {
    DK_TAG_UNDEFINED,
    DK_TAG_NUMBER,
    DK_TAG_BIGINT,
    DK_TAG_DATE,
    DK_TAG_REGEXP,
    DK_TAG_MAP,
    DK_TAG_SET,
    DK_TAG_NULLPROTO,
    DK_TAG_ERROR,
    DK_TAG_HOLE,
    DK_TAG_REF,
    DK_TAG_BYTES
};

/* The name of each tag below DK_TAG_BYTES, without the "$". */
extern const char *const dk_tag_names[DK_TAG_BYTES];

/* The tag name of a DK_BYTES_* kind, without the "$" ("Uint8Array"). */
extern const char *const dk_bytes_name[DK_BYTES_KIND_COUNT];

#endif
