// katana-demo: a runnable tour of Katana on a small to-do service whose dependency is a fake remote API.
//
// Each step shows one feature, checks that it behaves as the trace says, and ends with what it proves. The
// tour exits non-zero, naming the step, if any check fails, so CI runs it as a test. Time-based steps run on
// a TestClock: nothing waits for real time, and the output is the same on every run.

print("katana-demo: a tour of Katana on a small to-do service")
print("Each step runs real code against a store, checks the outcome, and says what it proves.")

await Tour.run([
  stateUpdatersStep,
  sideEffectsStep,
  returningSideEffectStep,
  errorStep,
  concurrencyStep,
  interceptorStep,
  observationStep,
  cancellationStep,
  debounceStep,
  featuresStep,
  promisesStep,
  recordingStep,
])
