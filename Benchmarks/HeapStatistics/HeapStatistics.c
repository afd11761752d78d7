#include "HeapStatistics.h"

#if __has_include(<malloc.h>)
#include <malloc.h>
#endif

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
long long tether_heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return (long long)info.uordblks;
}
#else
long long tether_heap_bytes_in_use(void) {
    return -1;
}
#endif
