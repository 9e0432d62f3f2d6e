import Foundation

/// Draws the report as an SVG: each case against the bare actor call, and the append cost against state
/// size for each kind of observer.
struct Chart {
  let report: Report

  func svg() -> String {
    let width = 1_020.0
    let rowHeight = 22.0
    let ratios = ratioRows()
    let appendRows = appendGroups()
    let topHeight = 60 + Double(ratios.count) * rowHeight
    let bottomHeight = 80 + Double(appendRows.count) * rowHeight * 2.6
    let height = topHeight + bottomHeight + 20
    var svg = """
      <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
      viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
      <rect width="100%" height="100%" fill="white"/>
      <text x="20" y="28" font-size="16" font-weight="bold">Cost of each case, in bare actor calls, log scale \
      (same run, median)</text>

      """
    // Panel 1: ratio to the actor call, on a log scale so that 1x and 100x both read.
    let left = 470.0  // Room for the longest case name at 12 px.
    let plotWidth = width - left - 90
    let maximum = Swift.max(ratios.map(\.ratio).max() ?? 1, 30)
    func x(_ ratio: Double) -> Double { left + plotWidth * log10(Swift.max(ratio, 0.1) / 0.1) / log10(maximum / 0.1) }
    for tick in [0.1, 1, 10, 100, 1_000, 10_000] where tick <= maximum {
      svg += line(x(tick), 45, x(tick), topHeight - 5, color: "#ddd")
      svg += text(x(tick), 42, tick < 1 ? "0.1x" : "\(Int(tick))x", anchor: "middle", color: "#888")
    }
    for (index, row) in ratios.enumerated() {
      let y = 50 + Double(index) * rowHeight
      svg += text(left - 8, y + 14, row.name, anchor: "end")
      let color = row.isBaseline ? "#9aa5b1" : "#2b6cb0"
      svg += rect(left, y + 3, x(row.ratio) - left, rowHeight - 7, color: color)
      svg += text(x(row.ratio) + 5, y + 14, String(format: "%.2fx", row.ratio), anchor: "start")
      if let target = row.target {
        svg += line(x(target), y + 1, x(target), y + rowHeight - 2, color: "#c53030", width: 2)
      }
    }
    svg += text(left, topHeight + 8, "red mark: SPEC 7 target", anchor: "start", color: "#c53030")
    // Panel 2: append cost at 10 and 1,000,000 elements.
    let panelTop = topHeight + 40
    svg += text(
      20, panelTop, "Append to a state array: ns per dispatch at 10 and 1,000,000 elements (log scale)", size: 16)
    let maximumCost = appendRows.flatMap { [$0.small, $0.large] }.max() ?? 1
    func xc(_ cost: Double) -> Double {
      left + plotWidth * log10(Swift.max(cost, 1)) / log10(Swift.max(maximumCost, 10))
    }
    for (index, row) in appendRows.enumerated() {
      let y = panelTop + 20 + Double(index) * rowHeight * 2.6
      svg += text(left - 8, y + 14, "\(row.observers), 10 elements", anchor: "end")
      svg += rect(left, y + 3, xc(row.small) - left, rowHeight - 7, color: "#68d391")
      svg += text(xc(row.small) + 5, y + 14, String(format: "%.0f ns", row.small), anchor: "start")
      svg += text(left - 8, y + 14 + rowHeight, "\(row.observers), 1,000,000 elements", anchor: "end")
      svg += rect(left, y + 3 + rowHeight, xc(row.large) - left, rowHeight - 7, color: "#2f855a")
      svg += text(xc(row.large) + 5, y + 14 + rowHeight, String(format: "%.0f ns", row.large), anchor: "start")
    }
    svg += "</svg>\n"
    return svg
  }

  private struct RatioRow {
    let name: String
    let ratio: Double
    let target: Double?
    let isBaseline: Bool
  }

  private func ratioRows() -> [RatioRow] {
    guard let actor = report.measurements.first(where: { $0.name == "baseline: bare actor call" })?.value else {
      return []
    }
    let targets: [String: Double] = ["dispatch: state updater": 10, "dispatch: empty side effect": 20]
    return report.measurements.filter {
      $0.unit == "ns/op" && !$0.name.hasPrefix("append") && !$0.name.hasSuffix("(interceptor group)")
    }.map {
      RatioRow(name: $0.name, ratio: $0.value / actor, target: targets[$0.name], isBaseline: $0.kind == .baseline)
    }
  }

  private struct AppendRow {
    let observers: String
    let small: Double
    let large: Double
  }

  private func appendGroups() -> [AppendRow] {
    ["no observer", "10 projections", "one listener"].compactMap { observers in
      guard
        let small = report.measurements.first(where: { $0.name == "append: 10 elements, \(observers)" }),
        let large = report.measurements.first(where: { $0.name == "append: 1,000,000 elements, \(observers)" })
      else { return nil }
      return AppendRow(observers: observers, small: small.value, large: large.value)
    }
  }

  private func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
      .replacingOccurrences(of: ">", with: "&gt;")
  }

  private func text(
    _ x: Double, _ y: Double, _ content: String, anchor: String = "start", color: String = "#222",
    size: Int = 12
  ) -> String {
    String(
      format: "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%@\" fill=\"%@\" font-size=\"%d\">%@</text>\n", x, y,
      anchor, color, size, escape(content))
  }

  private func rect(_ x: Double, _ y: Double, _ width: Double, _ height: Double, color: String) -> String {
    String(
      format: "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%@\"/>\n", x, y,
      Swift.max(width, 1), height, color)
  }

  private func line(
    _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, color: String, width: Double = 1
  ) -> String {
    String(
      format: "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%@\" stroke-width=\"%.1f\"/>\n", x1,
      y1, x2, y2, color, width)
  }
}
