public import Foundation

extension ConformanceEndpoints {
    /// A gzip member (RFC 1952) that expands to `count` zero bytes: one fixed-Huffman deflate block of a literal
    /// zero and back-references of 258 bytes at distance 1, 13 bits each — about 160:1, so 1 GiB of zeros takes
    /// 6.5 MB. The `/gzip/{n}` endpoint sends it whatever the request accepts, as a hostile server would.
    ///
    /// The CRC-32 in the trailer is computed for bodies up to 64 MiB; above that it is zero (a client that stops at
    /// its size limit never reaches the trailer, and one that reads on fails there).
    public static func gzipZeros(count: Int) -> Data {
        var bits = BitWriter()
        bits.write(1, count: 1)  // BFINAL
        bits.write(1, count: 2)  // BTYPE 01: fixed Huffman codes
        var left = count
        if left > 0 {
            bits.writeCode(0x30, count: 8)  // literal 0
            left -= 1
        }
        // Eight back-references are 104 bits, 13 whole bytes: from the ninth on, every eight write the same 13 bytes
        // with the same bits left pending, so those bytes are repeated instead of written bit by bit.
        var references = left / 258
        left -= references * 258
        let written = min(references, 16)
        for _ in 0..<written { bits.writeBackReference() }
        references -= written
        if written == 16 {
            let block = Array(bits.bytes.suffix(13))
            for _ in 0..<references / 8 { bits.bytes.append(contentsOf: block) }
            references %= 8
        }
        for _ in 0..<references { bits.writeBackReference() }
        for _ in 0..<left { bits.writeCode(0x30, count: 8) }
        bits.writeCode(0, count: 7)  // end of block (code 256)
        var member = Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF])
        member.append(contentsOf: bits.finished)
        let crc = count <= 64 << 20 ? crc32OfZeros(count) : 0
        for value in [crc, UInt32(truncatingIfNeeded: count)] {
            for shift in stride(from: 0, to: 32, by: 8) {
                member.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
            }
        }
        return member
    }

    private static func crc32OfZeros(_ count: Int) -> UInt32 {
        var table = [UInt32](repeating: 0, count: 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            table[index] = value
        }
        var crc: UInt32 = 0xFFFF_FFFF
        for _ in 0..<count { crc = table[Int(crc & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }
}

/// Deflate's bit order: fields least significant bit first, Huffman codes most significant bit first.
private struct BitWriter {
    var bytes: [UInt8] = []
    private var current: UInt8 = 0
    private var used = 0

    mutating func write(_ value: UInt32, count: Int) {
        for bit in 0..<count { push(UInt8((value >> UInt32(bit)) & 1)) }
    }

    /// Length 258 (code 285, no extra bits), distance 1 (code 0).
    mutating func writeBackReference() {
        writeCode(0xC5, count: 8)
        writeCode(0, count: 5)
    }

    mutating func writeCode(_ code: UInt32, count: Int) {
        for bit in stride(from: count - 1, through: 0, by: -1) { push(UInt8((code >> UInt32(bit)) & 1)) }
    }

    private mutating func push(_ bit: UInt8) {
        current |= bit << UInt8(used)
        used += 1
        if used == 8 {
            bytes.append(current)
            current = 0
            used = 0
        }
    }

    /// The bytes, the last one padded with zero bits.
    var finished: [UInt8] { used == 0 ? bytes : bytes + [current] }
}
