#include "CTetherZlib.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

// zlib counts in uInt; inputs and outputs are fed to it in pieces no larger than this.
static const size_t piece = 1u << 30;

// Inflates with `window_bits` (zlib's meaning); gzip members are read until the input ends.
static CTetherInflateResult inflate_with(
    const unsigned char *input, size_t input_length, int window_bits, int members, size_t limit,
    unsigned char **output, size_t *output_length) {
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (inflateInit2(&stream, window_bits) != Z_OK) return CTetherInflateNoMemory;
    size_t capacity = input_length < limit / 4 ? input_length * 4 + 64 : limit + 1;
    if (capacity > limit + 1) capacity = limit + 1;
    unsigned char *buffer = malloc(capacity > 0 ? capacity : 1);
    if (buffer == NULL) {
        inflateEnd(&stream);
        return CTetherInflateNoMemory;
    }
    size_t consumed = 0, produced = 0;
    CTetherInflateResult result = CTetherInflateDamaged;
    for (;;) {
        if (produced == capacity) {
            // One byte past the limit tells "too large" from "exactly the limit".
            if (capacity > limit) {
                result = CTetherInflateTooLarge;
                break;
            }
            size_t grown = capacity <= (limit + 1) / 2 ? capacity * 2 : limit + 1;
            unsigned char *larger = realloc(buffer, grown);
            if (larger == NULL) {
                result = CTetherInflateNoMemory;
                break;
            }
            buffer = larger;
            capacity = grown;
        }
        size_t in = input_length - consumed < piece ? input_length - consumed : piece;
        size_t out = capacity - produced < piece ? capacity - produced : piece;
        stream.next_in = (unsigned char *)input + consumed;
        stream.avail_in = (uInt)in;
        stream.next_out = buffer + produced;
        stream.avail_out = (uInt)out;
        int status = inflate(&stream, Z_NO_FLUSH);
        consumed += in - stream.avail_in;
        produced += out - stream.avail_out;
        if (status == Z_STREAM_END) {
            if (consumed == input_length) {
                result = produced > limit ? CTetherInflateTooLarge : CTetherInflateDone;
                break;
            }
            if (!members || inflateReset(&stream) != Z_OK) break;
            continue;
        }
        if (status == Z_MEM_ERROR) {
            result = CTetherInflateNoMemory;
            break;
        }
        // Z_BUF_ERROR with input left and room to write cannot happen; with neither, the stream is cut short.
        if (status != Z_OK && !(status == Z_BUF_ERROR && stream.avail_out == 0)) break;
        if (consumed == input_length && stream.avail_out != 0) break;
    }
    inflateEnd(&stream);
    if (result != CTetherInflateDone) {
        free(buffer);
        return result;
    }
    *output = buffer;
    *output_length = produced;
    return CTetherInflateDone;
}

CTetherInflateResult ctether_inflate(
    const unsigned char *input, size_t input_length, CTetherInflateFormat format, size_t limit,
    unsigned char **output, size_t *output_length) {
    if (format == CTetherInflateGzip) {
        return inflate_with(input, input_length, 16 + MAX_WBITS, 1, limit, output, output_length);
    }
    CTetherInflateResult result = inflate_with(input, input_length, MAX_WBITS, 0, limit, output, output_length);
    if (result != CTetherInflateDamaged) return result;
    return inflate_with(input, input_length, -MAX_WBITS, 0, limit, output, output_length);
}
