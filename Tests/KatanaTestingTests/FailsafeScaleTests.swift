import KatanaTestSupport
import KatanaTesting
import Testing

/// `KATANA_FAILSAFE_SCALE`: what a value of it makes every default failsafe of KatanaTesting.
@Suite("The failsafe factor from the environment", .timeLimit(.failsafeMinutes(3)))
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

  @Test func aTimeLimit_isItsMinutesTimesTheFactor() {
    #expect(TimeLimitTrait.timeLimit(.failsafeMinutes(3, scale: 4)).timeLimit == .seconds(720))
    #expect(TimeLimitTrait.timeLimit(.failsafeMinutes(3, scale: 1)).timeLimit == .seconds(180))
    #expect(
      TimeLimitTrait.timeLimit(.failsafeMinutes(3)).timeLimit == .seconds(180) * TestStoreConfiguration.failsafeScale)
  }

  @Test func theDefaultFailsafe_isThirtySecondsTimesTheFactorOfThisRun() {
    #expect(TestStoreConfiguration.defaultFailsafe == .seconds(30) * TestStoreConfiguration.failsafeScale)
    #expect(TestStoreConfiguration().failsafe == TestStoreConfiguration.defaultFailsafe)
  }
}
