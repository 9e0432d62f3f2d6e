import Foundation
import KatanaTestSupport
import Testing

@Suite("Fuzz coverage record")
struct FuzzCoverageTests {
  @Test func note_recordsEachEntry_andReportsTheOthersInManifestOrder() {
    let coverage = FuzzCoverage()
    #expect(coverage.unexercised() == FuzzEntryPoint.allCases)
    coverage.note(.storeAnySend)
    coverage.note(.undoOnScope)
    coverage.note(.storeAnySend)
    #expect(coverage.exercised(.storeAnySend))
    #expect(!coverage.exercised(.scopeAnySend))
    #expect(coverage.unexercised() == FuzzEntryPoint.allCases.filter { $0 != .storeAnySend && $0 != .undoOnScope })
    #expect(coverage.unexercised(of: [.storeAnySend, .scopeAnySend]) == [.scopeAnySend])
  }

  @Test func note_fromManyThreadsAtOnce_recordsEveryEntry() async {
    let coverage = FuzzCoverage()
    let cases = FuzzEntryPoint.allCases
    let done = EventCounter()
    for thread in 0..<4 {
      Thread {
        for (index, entry) in cases.enumerated() where index % 2 == thread % 2 {
          coverage.note(entry)
        }
        done.increment()
      }.start()
    }
    let finished = await withFailsafe(seconds: 30) { () async -> Bool in
      await done.wait(for: 4)
      return true
    }
    #expect(finished == true, "the noting threads did not finish within 30 s")
    #expect(coverage.unexercised().isEmpty)
  }

  @Test func rawValues_areTheKeysOfTheCheck_oneLineEach() {
    for entry in FuzzEntryPoint.allCases {
      #expect(!entry.rawValue.isEmpty && !entry.rawValue.contains("\n") && !entry.rawValue.contains("\""))
    }
  }
}
