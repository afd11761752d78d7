import Foundation

/// An SVG line chart for the report: axis titles, round tick values, a legend, one `<polyline>` per series (each
/// with `class="series"` and `data-series`, so a browser test can find it). Self-contained: no scripts, no fonts.
struct LineChart {
    struct Series {
        var name: String
        var color: String
        /// (x, y) in the axes' units.
        var points: [(Double, Double)]
        /// Drawn thicker and last, so a flat line along the axis stays visible.
        var emphasised = false
    }

    /// What the chart is, for `data-chart` and the accessible label.
    var identifier: String
    var label: String
    var xTitle: String
    var yTitle: String
    var series: [Series]
    /// Formats a y tick ("12 MB").
    var yTick: (Double) -> String
    /// Formats an x tick ("2 s").
    var xTick: (Double) -> String
    /// Moments to mark with a dashed vertical line and a label (`class="marker"`).
    var markers: [(x: Double, label: String)] = []

    static let width = 900.0, height = 300.0
    static let left = 78.0, right = 16.0, top = 16.0, bottom = 52.0

    func svg() -> String {
        let allX = series.flatMap { $0.points.map(\.0) } + markers.map(\.x)
        let allY = series.flatMap { $0.points.map(\.1) }
        let xAxis = Self.roundTicks(upTo: allX.max() ?? 1)
        let yAxis = Self.roundTicks(upTo: allY.max() ?? 1)
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        func x(_ value: Double) -> Double { Self.left + value / xAxis.top * plotWidth }
        func y(_ value: Double) -> Double { Self.top + plotHeight - max(value, 0) / yAxis.top * plotHeight }

        var parts: [String] = []
        for tick in yAxis.ticks {
            parts.append(
                String(
                    format: ##"<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#e6e6e6"/>"##,
                    Self.left, Self.width - Self.right, y(tick), y(tick)))
            parts.append(
                String(
                    format: ##"<text x="%.0f" y="%.1f" font-size="11" text-anchor="end" fill="#555">%@</text>"##,
                    Self.left - 6, y(tick) + 4, Self.escape(yTick(tick))))
        }
        for tick in xAxis.ticks {
            parts.append(
                String(
                    format: ##"<text x="%.1f" y="%.0f" font-size="11" text-anchor="middle" fill="#555">%@</text>"##,
                    x(tick), Self.height - Self.bottom + 16, Self.escape(xTick(tick))))
        }
        parts.append(
            String(
                format: ##"<line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="#999"/>"##,
                Self.left, Self.left, Self.top, Self.height - Self.bottom))
        parts.append(
            String(
                format: ##"<line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="#999"/>"##,
                Self.left, Self.width - Self.right, Self.height - Self.bottom, Self.height - Self.bottom))
        parts.append(
            String(
                format:
                    ##"<text class="axis-title" x="%.0f" y="%.0f" font-size="12" text-anchor="middle" fill="#333">%@</text>"##,
                Self.left + plotWidth / 2, Self.height - 10, Self.escape(xTitle)))
        parts.append(
            String(
                format:
                    ##"<text class="axis-title" transform="translate(16 %.0f) rotate(-90)" font-size="12" text-anchor="middle" fill="#333">%@</text>"##,
                Self.top + plotHeight / 2, Self.escape(yTitle)))
        // Moments closer than 60 points share one line and one label ("killed, restarted").
        var groups: [(x: Double, label: String)] = []
        for marker in markers.sorted(by: { $0.x < $1.x }) {
            if let last = groups.last, x(marker.x) - x(last.x) < 60 {
                groups[groups.count - 1].label += ", " + marker.label
            } else {
                groups.append(marker)
            }
        }
        for (index, marker) in groups.enumerated() {
            parts.append(
                String(
                    format:
                        ##"<line class="marker" x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#999" stroke-dasharray="4 3"/>"##,
                    x(marker.x), x(marker.x), Self.top, Self.height - Self.bottom))
            // Along the bottom, clear of the legend, in two alternating rows.
            parts.append(
                String(
                    format: ##"<text x="%.1f" y="%.0f" font-size="10" fill="#555">%@</text>"##, x(marker.x) + 3,
                    Self.height - Self.bottom - 6 - Double(index % 2) * 12, Self.escape(marker.label)))
        }
        let ordered = series.filter { !$0.emphasised } + series.filter(\.emphasised)
        for line in ordered {
            let points = line.points.map { String(format: "%.1f,%.1f", x($0.0), y($0.1)) }.joined(separator: " ")
            parts.append(
                ##"<polyline class="series" data-series="\##(Self.escape(line.name))" fill="none" stroke="\##(line.color)" "##
                    + ##"stroke-width="\##(line.emphasised ? 3 : 2)" stroke-linejoin="round" points="\##(points)">"##
                    + "<title>\(Self.escape(line.name))</title></polyline>")
        }
        for (index, line) in series.enumerated() {
            let legendY = Self.top + 14 + Double(index) * 16
            parts.append(
                String(
                    format: ##"<rect x="%.0f" y="%.0f" width="14" height="4" fill="%@"/>"##, Self.left + 10,
                    legendY - 6, line.color))
            parts.append(
                String(
                    format: ##"<text x="%.0f" y="%.0f" font-size="12" fill="#333">%@</text>"##,
                    Self.left + 30, legendY, Self.escape(line.name)))
        }
        return """
            <svg class="chart" data-chart="\(Self.escape(identifier))" xmlns="http://www.w3.org/2000/svg" \
            width="\(Int(Self.width))" height="\(Int(Self.height))" viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" \
            role="img" aria-label="\(Self.escape(label))">
            \(parts.joined(separator: "\n"))
            </svg>
            """
    }

    /// Ticks at round values (1, 2 or 5 times a power of ten) from zero to at least `maximum`, four to eight of them.
    static func roundTicks(upTo maximum: Double) -> (ticks: [Double], top: Double) {
        let maximum = maximum > 0 && maximum.isFinite ? maximum : 1
        let rough = maximum / 5
        let magnitude = pow(10, floor(log10(rough)))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= rough } ?? 10 * magnitude
        let count = Int((maximum / step).rounded(.up))
        let ticks = (0...max(count, 1)).map { Double($0) * step }
        return (ticks, ticks.last ?? step)
    }

    /// A number as a tick shows it: no trailing zeros, at most two decimals.
    static func format(_ value: Double) -> String {
        if value == value.rounded() { return String(format: "%.0f", value) }
        let text = String(format: "%.2f", value)
        return text.hasSuffix("0") ? String(text.dropLast()) : text
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
