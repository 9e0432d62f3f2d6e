import KatanaTestSupport
import Testing

/// The filter that keeps Swift Testing's reports of expected issues out of a passing run's output.
@Suite("Test output: expected issues stay out of a passing run's output")
struct OutputCaptureTests {
  @Test func knownIssueReports_areRecognised_withTheirMessageAndDiffLines_andNothingElse() {
    let lines: [Substring] = [
      "◇ Test other() started.",
      "━ Test wrongMutation() recorded a known issue at Tests.swift:30:31: Issue recorded",
      "↳ State change of Increment(by: 2) does not match the expectation. Differences:",
      "    count: expected 3, actual 2",
      "↳ the mutation is wrong on purpose",
      "✔ Test other() passed after 0.01 seconds.",
      "✘ Test broken() recorded an issue at Tests.swift:9:5: Expectation failed",
      "↳ a real failure's comment",
    ]
    #expect(knownIssueReportLines(lines) == [false, true, true, true, true, false, false, false])
  }
}
