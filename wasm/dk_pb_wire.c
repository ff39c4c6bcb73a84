/*
 * dk_pb_wire.c - the protobuf wire format under darmok.Document: the check
 * of every tag, varint and length against the descriptors before protobuf-c
 * unpacks (pb_wire_check), and the search for an element's byte offset that
 * error reports make afterwards (pb_elem_at_unsafe). The reader
 * (dk_pb_read.c) calls each once per document: pb_varint, the per-field
 * step, stays in this file with its callers.
 */
#include "dk_pb.h"

/* Deepest message nesting the schema allows is 2 (Document > Shape); a
 * margin for future revisions. */
#define PB_SCAN_NEST 4

/* Parse a varint of at most max bytes at in[*pos..end). 0: ok, *pos past it. */
static int pb_varint(const uint8_t *in, size_t *pos, size_t end, unsigned max, uint64_t *v)
{
    uint64_t r = 0;
    unsigned i;
    /* one byte: nearly every tag and length of a document */
    if (*pos < end && in[*pos] < 0x80) {
        *v = in[(*pos)++];
        return 0;
    }
    for (i = 0; i < max && *pos + i < end; i++) {
        uint8_t b = in[*pos + i];
        r |= (uint64_t)(b & 0x7F) << (7 * i);
        if ((b & 0x80) == 0) {
            *pos += i + 1;
            *v = r;
            return 0;
        }
    }
    return -1;
}

static int pb_is_varint_type(ProtobufCType t)
{
    return t == PROTOBUF_C_TYPE_INT32 || t == PROTOBUF_C_TYPE_SINT32 ||
           t == PROTOBUF_C_TYPE_UINT32 || t == PROTOBUF_C_TYPE_INT64 ||
           t == PROTOBUF_C_TYPE_SINT64 || t == PROTOBUF_C_TYPE_UINT64 ||
           t == PROTOBUF_C_TYPE_BOOL || t == PROTOBUF_C_TYPE_ENUM;
}

static int pb_is_fixed32_type(ProtobufCType t)
{
    return t == PROTOBUF_C_TYPE_FIXED32 || t == PROTOBUF_C_TYPE_SFIXED32 ||
           t == PROTOBUF_C_TYPE_FLOAT;
}

static int pb_is_fixed64_type(ProtobufCType t)
{
    return t == PROTOBUF_C_TYPE_FIXED64 || t == PROTOBUF_C_TYPE_SFIXED64 ||
           t == PROTOBUF_C_TYPE_DOUBLE;
}

/*
 * A varint v for a 32-bit field. protobuf-c keeps the low 32 bits of a
 * longer one without a word; we refuse it instead, except the sign-extended
 * 10-byte form protobuf writes for a negative int32 or enum.
 */
static int pb_fits_32(ProtobufCType t, uint64_t v)
{
    if (t == PROTOBUF_C_TYPE_UINT32 || t == PROTOBUF_C_TYPE_SINT32 || t == PROTOBUF_C_TYPE_BOOL)
        return v <= UINT32_MAX;
    if (t == PROTOBUF_C_TYPE_INT32 || t == PROTOBUF_C_TYPE_ENUM)
        return v <= UINT32_MAX || v >= 0xFFFFFFFF80000000u;
    return 1;
}

/*
 * The descriptor of field `id` of desc, or NULL. Generated descriptors list
 * fields by number, so for a schema numbered 1, 2, 3... (ours) field id is
 * at index id - 1, checked; protobuf-c's lookup (a binary search over
 * ranges, and a call) otherwise, which would run once per tag.
 */
static const ProtobufCFieldDescriptor *pb_field(const ProtobufCMessageDescriptor *desc, uint64_t id)
{
    if (id - 1 < desc->n_fields && desc->fields[id - 1].id == id) return &desc->fields[id - 1];
    return protobuf_c_message_descriptor_get_field(desc, (unsigned)id);
}

/*
 * Check the wire bytes against the descriptors, as protobuf-c will read
 * them, before protobuf-c does: every tag, varint and length in bounds, wire
 * types matching known fields, varints of 32-bit fields in range, packed
 * runs well-formed and not empty, no groups, bytes fields at most
 * max_length bytes. (The schema has no `string` fields: protobuf-c would
 * neither check their UTF-8 nor keep a U+0000 in them.) Iterative;
 * sub-messages nest at most PB_SCAN_NEST deep.
 *
 * After this passes, protobuf-c's unpack can only fail for lack of memory.
 */
int pb_wire_check(const uint8_t *in, size_t len, uint32_t max_str, dk_err *err)
{
    struct {
        const ProtobufCMessageDescriptor *desc;
        size_t end;
        uint64_t seen; /* singular message fields met, by field index */
    } st[PB_SCAN_NEST];
    size_t depth = 1, pos = 0;

    st[0].desc = &darmok__document__descriptor;
    st[0].end = len;
    st[0].seen = 0;
    while (depth > 0) {
        const ProtobufCMessageDescriptor *desc = st[depth - 1].desc;
        size_t end = st[depth - 1].end, at = pos;
        const ProtobufCFieldDescriptor *fd;
        uint64_t tag, v;
        unsigned wt;

        if (pos == end) {
            depth--;
            continue;
        }
        if (pb_varint(in, &pos, end, 5, &tag) != 0 || tag > UINT32_MAX)
            return dk_fail(err, DK_ERR_SYNTAX, "bad protobuf tag", at);
        wt = (unsigned)(tag & 7);
        if ((tag >> 3) == 0) return dk_fail(err, DK_ERR_SYNTAX, "protobuf field number 0", at);
        fd = pb_field(desc, tag >> 3);

        switch (wt) {
        case 0: /* varint */
            if (pb_varint(in, &pos, end, 10, &v) != 0)
                return dk_fail(err, DK_ERR_SYNTAX, "bad protobuf varint", pos);
            if (fd != NULL && !pb_is_varint_type(fd->type))
                return dk_fail(err, DK_ERR_SYNTAX, "protobuf wire type does not match the field",
                               at);
            if (fd != NULL && !pb_fits_32(fd->type, v))
                return dk_fail(err, DK_ERR_SYNTAX, "varint out of range for a 32-bit field", at);
            break;
        case 1:   /* 64-bit */
        case 5: { /* 32-bit */
            size_t w = wt == 1 ? 8 : 4;
            if (end - pos < w)
                return dk_fail(err, DK_ERR_SYNTAX, "protobuf input ends inside a field", pos);
            if (fd != NULL &&
                !(wt == 1 ? pb_is_fixed64_type(fd->type) : pb_is_fixed32_type(fd->type)))
                return dk_fail(err, DK_ERR_SYNTAX, "protobuf wire type does not match the field",
                               at);
            pos += w;
            break;
        }
        case 2: { /* length-delimited */
            size_t start, n;
            if (pb_varint(in, &pos, end, 5, &v) != 0)
                return dk_fail(err, DK_ERR_SYNTAX, "bad protobuf length", pos);
            if (v > (uint64_t)(end - pos))
                return dk_fail(err, DK_ERR_SYNTAX,
                               "protobuf length runs past the end of its message", at);
            start = pos;
            n = (size_t)v;
            pos += n;
            if (fd == NULL) break;
            if (fd->type == PROTOBUF_C_TYPE_STRING) {
                return dk_fail(err, DK_ERR_SYNTAX, "protobuf string fields are not supported", at);
            } else if (fd->type == PROTOBUF_C_TYPE_BYTES) {
                /* The string table and the texts are a run of entries
                 * with one tag byte each: the rest of the run is checked
                 * here, entry by entry as the loop would, without going
                 * through the tag's decoding and lookup again. */
                for (;;) {
                    if (n > max_str)
                        return dk_fail(err, DK_ERR_TOO_LONG,
                                       "string or binary longer than max_length", at);
                    if (pos == end || in[pos] != tag || tag >= 0x80) break;
                    at = pos++;
                    if (pb_varint(in, &pos, end, 5, &v) != 0)
                        return dk_fail(err, DK_ERR_SYNTAX, "bad protobuf length", pos);
                    if (v > (uint64_t)(end - pos))
                        return dk_fail(err, DK_ERR_SYNTAX,
                                       "protobuf length runs past the end of its message", at);
                    n = (size_t)v;
                    pos += n;
                }
            } else if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
                /* A singular message field given twice is merged by
                 * protobuf-c, and 1.4.1's merge can fail. darmok never
                 * writes a field twice: refuse. */
                size_t fi = (size_t)(fd - desc->fields);
                if (fd->label != PROTOBUF_C_LABEL_REPEATED &&
                    !(fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && fi < 64) {
                    if (st[depth - 1].seen & ((uint64_t)1 << fi))
                        return dk_fail(err, DK_ERR_FORMAT, "message field given twice", at);
                    st[depth - 1].seen |= (uint64_t)1 << fi;
                }
                if (depth == PB_SCAN_NEST)
                    return dk_fail(err, DK_ERR_DEPTH, "protobuf messages nested too deeply", at);
                st[depth].desc = fd->descriptor;
                st[depth].end = pos;
                st[depth].seen = 0;
                depth++;
                pos = start;
            } else if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
                /* A packed run of scalars. Encoders never write an empty
                 * one, and protobuf-c 1.4.1 then does arithmetic on a NULL
                 * array (undefined behaviour): refuse. */
                size_t p = start, e0;
                if (n == 0) return dk_fail(err, DK_ERR_FORMAT, "empty packed field", at);
                if (pb_is_varint_type(fd->type)) {
                    while (p < pos) {
                        /* A byte < 0x80 is a one-byte varint, in range
                         * for every type: most Kinds, counts and ints.
                         * Skipped a run at a time while all are. */
                        if (pos - p >= DK_PLAIN_RUN && dk_ascii_mask(in + p) == 0) {
                            p += DK_PLAIN_RUN;
                            continue;
                        }
                        e0 = p;
                        if (pb_varint(in, &p, pos, 10, &v) != 0)
                            return dk_fail(err, DK_ERR_SYNTAX, "bad varint in a packed field", e0);
                        if (!pb_fits_32(fd->type, v))
                            return dk_fail(err, DK_ERR_SYNTAX,
                                           "varint out of range for a 32-bit field", e0);
                    }
                } else if ((pb_is_fixed32_type(fd->type) && n % 4 != 0) ||
                           (pb_is_fixed64_type(fd->type) && n % 8 != 0)) {
                    return dk_fail(err, DK_ERR_SYNTAX,
                                   "packed field length is not a multiple of its element", at);
                }
            } else {
                return dk_fail(err, DK_ERR_SYNTAX, "protobuf wire type does not match the field",
                               at);
            }
            break;
        }
        default:
            return dk_fail(err, DK_ERR_SYNTAX,
                           "protobuf groups and wire types 6, 7 are not supported", at);
        }
    }
    return 0;
}

/*
 * The byte offset of element i of the Document's repeated field `field`, as
 * protobuf-c counted it: packed runs element by element, other occurrences
 * one each, in wire order. Only for error reports, after pb_wire_check has
 * passed (hence _unsafe: it trusts the wire structure, though every read is
 * still bounded). len when there is no such element.
 */
size_t pb_elem_at_unsafe(const uint8_t *in, size_t len, unsigned field, size_t i)
{
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field(&darmok__document__descriptor, field);
    size_t pos = 0, k = 0;
    while (pos < len) {
        size_t at = pos, end;
        uint64_t tag, v;
        if (pb_varint(in, &pos, len, 5, &tag) != 0) break;
        switch (tag & 7) {
        case 0:
            if (pb_varint(in, &pos, len, 10, &v) != 0) return len;
            break;
        case 1: pos += 8; break;
        case 5: pos += 4; break;
        case 2:
            if (pb_varint(in, &pos, len, 5, &v) != 0 || v > len - pos) return len;
            end = pos + (size_t)v;
            if ((tag >> 3) == field && fd != NULL && fd->label == PROTOBUF_C_LABEL_REPEATED &&
                fd->type != PROTOBUF_C_TYPE_BYTES && fd->type != PROTOBUF_C_TYPE_MESSAGE) {
                size_t step = pb_is_fixed64_type(fd->type)   ? 8
                              : pb_is_fixed32_type(fd->type) ? 4
                                                             : 0;
                while (pos < end) {
                    if (k++ == i) return pos;
                    if (step != 0)
                        pos += step;
                    else if (pb_varint(in, &pos, end, 10, &v) != 0)
                        return len;
                }
                continue;
            }
            pos = end;
            if ((tag >> 3) == field && k++ == i) return at;
            continue;
        default: return len;
        }
        if ((tag >> 3) == field && k++ == i) return at;
    }
    return len;
}
