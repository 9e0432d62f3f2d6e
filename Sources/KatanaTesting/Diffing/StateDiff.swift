/// Field-level differences between two values, found through reflection (`Mirror`).
///
/// Each line names a path into the value and what differs there:
///
/// ```text
/// results.count: expected 2, actual 3
/// results[1].title: expected "milk", actual "eggs"
/// error: expected nil, actual "offline"
/// scores["ann"]: expected 3, actual 4
/// ```
///
/// Structs, classes and tuples are compared field by field, enums case by case and then through their
/// payload, optionals through their wrapped value, arrays element by element (with a line for the count
/// when it differs), dictionaries key by key and sets member by member. Anything else is a leaf, compared
/// by its description.
package enum StateDiff {
  /// The lines describing how `actual` differs from `expected`; empty when reflection finds no difference.
  ///
  /// - Parameter limit: The most lines returned; a last line counts the rest.
  package static func lines(expected: Any, actual: Any, limit: Int = 40) -> [String] {
    var walker = Walker(limit: limit)
    walker.compare(expected, actual, path: "", depth: 0)
    if walker.omitted > 0 {
      walker.lines.append("… and \(walker.omitted) more \(walker.omitted == 1 ? "difference" : "differences")")
    }
    return walker.lines
  }

  /// How a value reads in a diff line: strings quoted, everything else as `String(describing:)` prints it,
  /// shortened.
  package static func format(_ value: Any) -> String {
    let text: String
    switch value {
    case let string as String: text = String(reflecting: string)
    case let substring as Substring: text = String(reflecting: String(substring))
    case let character as Character: text = String(reflecting: character)
    default:
      let mirror = Mirror(reflecting: value)
      if mirror.displayStyle == .optional {
        text = mirror.children.first.map { format($0.value) } ?? "nil"
      } else {
        text = String(describing: value)
      }
    }
    return abbreviated(text, limit: 120)
  }

  private struct Walker {
    let limit: Int
    var lines: [String] = []
    var omitted = 0
    /// Objects on the path being compared, to stop at reference cycles.
    var objectsOnPath: Set<ObjectIdentifier> = []

    /// Deeper than this, values are compared as leaves.
    static let maximumDepth = 32

    init(limit: Int) {
      self.limit = limit
    }

    mutating func report(_ path: String, _ text: String) {
      guard lines.count < limit else {
        omitted += 1
        return
      }
      lines.append(path.isEmpty ? text : "\(path): \(text)")
    }

    mutating func reportLeaf(_ expected: Any, _ actual: Any, path: String) {
      report(path, "expected \(format(expected)), actual \(format(actual))")
    }

    mutating func compare(_ expected: Any, _ actual: Any, path: String, depth: Int) {
      guard type(of: expected) == type(of: actual) else {
        report(
          path,
          "expected \(format(expected)) (\(type(of: expected))), actual \(format(actual)) (\(type(of: actual)))")
        return
      }
      let expectedMirror = Mirror(reflecting: expected)
      let actualMirror = Mirror(reflecting: actual)
      guard depth < Self.maximumDepth else {
        compareLeaves(expected, actual, path: path)
        return
      }
      switch expectedMirror.displayStyle {
      case .optional:
        compareOptionals(expectedMirror, actualMirror, path: path, depth: depth)
      case .collection:
        compareSequences(expectedMirror, actualMirror, path: path, depth: depth)
      case .dictionary:
        compareDictionaries(expectedMirror, actualMirror, path: path, depth: depth)
      case .set:
        compareSets(expectedMirror, actualMirror, path: path)
      case .enum:
        compareEnums(expected, actual, expectedMirror, actualMirror, path: path, depth: depth)
      case .class:
        compareObjects(expected, actual, expectedMirror, actualMirror, path: path, depth: depth)
      case .struct, .tuple:
        compareFields(expected, actual, expectedMirror, actualMirror, path: path, depth: depth)
      default:
        compareLeaves(expected, actual, path: path)
      }
    }

    mutating func compareLeaves(_ expected: Any, _ actual: Any, path: String) {
      if String(reflecting: expected) != String(reflecting: actual) {
        reportLeaf(expected, actual, path: path)
      }
    }

    mutating func compareOptionals(_ expected: Mirror, _ actual: Mirror, path: String, depth: Int) {
      switch (expected.children.first?.value, actual.children.first?.value) {
      case (nil, nil):
        return
      case (let wrappedExpected?, let wrappedActual?):
        compare(wrappedExpected, wrappedActual, path: path, depth: depth + 1)
      case (nil, let wrappedActual?):
        report(path, "expected nil, actual \(format(wrappedActual))")
      case (let wrappedExpected?, nil):
        report(path, "expected \(format(wrappedExpected)), actual nil")
      }
    }

    mutating func compareSequences(_ expected: Mirror, _ actual: Mirror, path: String, depth: Int) {
      let expectedElements = expected.children.map(\.value)
      let actualElements = actual.children.map(\.value)
      if expectedElements.count != actualElements.count {
        report(
          join(path, "count"), "expected \(expectedElements.count), actual \(actualElements.count)")
      }
      let common = min(expectedElements.count, actualElements.count)
      for index in 0..<common {
        compare(expectedElements[index], actualElements[index], path: "\(path)[\(index)]", depth: depth + 1)
      }
      for index in common..<expectedElements.count {
        report("\(path)[\(index)]", "expected \(format(expectedElements[index])), actual no element")
      }
      for index in common..<actualElements.count {
        report("\(path)[\(index)]", "unexpected element \(format(actualElements[index]))")
      }
    }

    mutating func compareDictionaries(_ expected: Mirror, _ actual: Mirror, path: String, depth: Int) {
      let expectedEntries = Self.entries(expected)
      let actualEntries = Self.entries(actual)
      let keys = Set(expectedEntries.keys).union(actualEntries.keys).sorted()
      for key in keys {
        let entryPath = "\(path)[\(key)]"
        switch (expectedEntries[key], actualEntries[key]) {
        case (let expectedValue?, let actualValue?):
          compare(expectedValue, actualValue, path: entryPath, depth: depth + 1)
        case (let expectedValue?, nil):
          report(entryPath, "expected \(format(expectedValue)), actual no such key")
        case (nil, let actualValue?):
          report(entryPath, "unexpected key, with value \(format(actualValue))")
        case (nil, nil):
          break
        }
      }
    }

    /// A dictionary's entries keyed by the description of their keys (a mirror shows each entry as a
    /// `(key, value)` pair).
    static func entries(_ mirror: Mirror) -> [String: Any] {
      var entries: [String: Any] = [:]
      for child in mirror.children {
        let pair = Mirror(reflecting: child.value).children.map(\.value)
        guard pair.count == 2 else { continue }
        entries[format(pair[0])] = pair[1]
      }
      return entries
    }

    mutating func compareSets(_ expected: Mirror, _ actual: Mirror, path: String) {
      let expectedMembers = Set(expected.children.map { format($0.value) })
      let actualMembers = Set(actual.children.map { format($0.value) })
      for member in expectedMembers.subtracting(actualMembers).sorted() {
        report(path, "expected to contain \(member), actual does not")
      }
      for member in actualMembers.subtracting(expectedMembers).sorted() {
        report(path, "unexpectedly contains \(member)")
      }
    }

    mutating func compareEnums(
      _ expected: Any, _ actual: Any, _ expectedMirror: Mirror, _ actualMirror: Mirror, path: String, depth: Int
    ) {
      guard let expectedCase = expectedMirror.children.first, let actualCase = actualMirror.children.first,
        let label = expectedCase.label, label == actualCase.label
      else {
        // Cases without a payload, or different cases: the whole value is the difference.
        compareLeaves(expected, actual, path: path)
        return
      }
      compare(expectedCase.value, actualCase.value, path: join(path, label), depth: depth + 1)
    }

    mutating func compareObjects(
      _ expected: Any, _ actual: Any, _ expectedMirror: Mirror, _ actualMirror: Mirror, path: String, depth: Int
    ) {
      let expectedObject = expected as AnyObject
      if expectedObject === (actual as AnyObject) { return }
      let identifier = ObjectIdentifier(expectedObject)
      guard objectsOnPath.insert(identifier).inserted else { return }
      defer { objectsOnPath.remove(identifier) }
      compareFields(expected, actual, expectedMirror, actualMirror, path: path, depth: depth)
    }

    mutating func compareFields(
      _ expected: Any, _ actual: Any, _ expectedMirror: Mirror, _ actualMirror: Mirror, path: String, depth: Int
    ) {
      let expectedFields = Self.fields(expectedMirror)
      let actualFields = Self.fields(actualMirror)
      guard !expectedFields.isEmpty, expectedFields.count == actualFields.count else {
        compareLeaves(expected, actual, path: path)
        return
      }
      for (index, (expectedField, actualField)) in zip(expectedFields, actualFields).enumerated() {
        let label = expectedField.label.map(Self.fieldName) ?? "\(index)"
        compare(expectedField.value, actualField.value, path: join(path, label), depth: depth + 1)
      }
    }

    /// A mirror's children, with those of its superclasses first.
    static func fields(_ mirror: Mirror) -> [Mirror.Child] {
      (mirror.superclassMirror.map(fields) ?? []) + Array(mirror.children)
    }

    /// The name to show for a field: property wrappers store `_name`, unlabeled tuple elements are `.0`,
    /// `.1`; show `name`, `0`, `1`.
    static func fieldName(_ label: String) -> String {
      (label.hasPrefix("_") || label.hasPrefix(".")) && label.count > 1 ? String(label.dropFirst()) : label
    }

    func join(_ path: String, _ component: String) -> String {
      path.isEmpty ? component : "\(path).\(component)"
    }
  }
}
