// Inflates a body coded `gzip` or `deflate` (RFC 9110, section 8.4.1) with the platform's zlib, the library
// FoundationNetworking and libcurl decode with; one call, so that zlib's macros stay on the C side.
#pragma once
#include <stddef.h>

/// How ctether_inflate ended.
typedef enum {
    /// `*output` holds `*output_length` bytes, allocated with malloc: free it.
    CTetherInflateDone = 0,
    /// The decoded body would be longer than the limit; nothing is returned.
    CTetherInflateTooLarge = 1,
    /// The input is not a complete stream of the given format (damaged, truncated, or followed by other bytes).
    CTetherInflateDamaged = 2,
    /// Memory ran out.
    CTetherInflateNoMemory = 3,
} CTetherInflateResult;

/// The formats ctether_inflate reads.
typedef enum {
    /// One or more gzip members (RFC 1952), one after another.
    CTetherInflateGzip = 0,
    /// A zlib stream (RFC 1950), which is what HTTP's `deflate` names, or raw deflate (RFC 1951), which some
    /// servers send under that name.
    CTetherInflateDeflate = 1,
} CTetherInflateFormat;

/// Decodes `input` into at most `limit` bytes.
CTetherInflateResult ctether_inflate(
    const unsigned char *input, size_t input_length, CTetherInflateFormat format, size_t limit,
    unsigned char **output, size_t *output_length);
