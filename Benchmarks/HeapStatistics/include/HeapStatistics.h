// Bytes the C heap holds, for the memory-per-object benchmarks: glibc's mallinfo2, which Swift's Glibc module does
// not export. Elsewhere (no mallinfo2) it returns -1 and the benchmark reports nothing.
#ifndef TETHER_HEAP_STATISTICS_H
#define TETHER_HEAP_STATISTICS_H

long long tether_heap_bytes_in_use(void);

#endif
