import Foundation

/// Everything one run produced.
struct Report: Codable {
  struct Machine: Codable {
    let processors: Int
    let operatingSystem: String
    let iterations: Int
    let batches: Int
  }

  let machine: Machine
  let measurements: [Measurement]
  let targets: [TargetCheck]

  var allTargetsMet: Bool { targets.allSatisfy(\.met) }

  func json() throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    return String(decoding: try encoder.encode(self), as: UTF8.self)
  }

  func table() -> String {
    var lines: [String] = []
    let actorCall = measurements.first { $0.name == "baseline: bare actor call" }?.value
    lines.append(
      "Katana benchmarks: median of \(machine.batches) batches, \(machine.processors) processors, "
        + "\(machine.operatingSystem)")
    lines.append("")
    let header = [
      pad("case", 52), pad("median", 12, right: true), pad("spread", 8, right: true),
      pad("x actor call", 13, right: true),
    ]
    lines.append(header.joined(separator: " "))
    lines.append(String(repeating: "-", count: 88))
    for measurement in measurements {
      let median =
        measurement.unit == "MB"
        ? String(format: "%.2f MB", measurement.value) : String(format: "%.1f ns", measurement.value)
      let ratio =
        (measurement.unit == "ns/op" && actorCall != nil)
        ? String(format: "%.2f", measurement.value / actorCall!) : ""
      let row = [
        pad(measurement.name, 52), pad(median, 12, right: true),
        pad(String(format: "%.0f%%", measurement.stats.spread * 100), 8, right: true), pad(ratio, 13, right: true),
      ]
      lines.append(row.joined(separator: " "))
    }
    lines.append("")
    lines.append("SPEC section 7 targets:")
    for target in targets {
      lines.append("  [\(target.met ? "met" : "NOT MET")] \(target.target): \(target.measured)")
    }
    return lines.joined(separator: "\n")
  }

  private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    guard text.count < width else { return text }
    let padding = String(repeating: " ", count: width - text.count)
    return right ? padding + text : text + padding
  }
}
