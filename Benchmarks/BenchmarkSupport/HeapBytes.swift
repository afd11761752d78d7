import HeapStatistics

/// Bytes the C heap holds now (glibc's `mallinfo2`); nil where there is no such call.
public func heapBytesInUse() -> Int? {
    let bytes = tether_heap_bytes_in_use()
    return bytes < 0 ? nil : Int(bytes)
}
