import KatanaTesting
import Testing

/// `KATANA_FAILSAFE_SCALE`: what a value of it makes every default failsafe of KatanaTesting.
@Suite("The failsafe factor from the environment", .timeLimit(.minutes(3)))
struct FailsafeScaleTests {
  @Test(
    arguments: [
      (nil, 1), ("1", 1), ("4", 4), ("100", 100),
      // Ignored: the default stays 30 seconds rather than shrinking, growing without bound, or trapping.
      ("0", 1), ("-3", 1), ("101", 1), ("2.5", 1), ("four", 1), ("", 1), (" 4", 1), ("9223372036854775808", 1),
    ] as [(String?, Int)])
  func aValue_setsAWholeFactorFromOneToAHundred_orIsIgnored(value: String?, factor: Int) {
    #expect(TestStoreConfiguration.failsafeScale(fromEnvironmentValue: value) == factor)
  }

  @Test func theDefaultFailsafe_isThirtySecondsTimesTheFactorOfThisRun() {
    #expect(TestStoreConfiguration.defaultFailsafe == .seconds(30) * TestStoreConfiguration.failsafeScale)
    #expect(TestStoreConfiguration().failsafe == TestStoreConfiguration.defaultFailsafe)
  }
}
