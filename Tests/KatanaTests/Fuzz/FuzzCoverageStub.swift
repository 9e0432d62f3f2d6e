// TEMPORARY stub until helper/entry's manifest is merged.
enum FuzzEntryPoint {
  case storeAnyDispatch, scopeAnyDispatch, storeAnySend, scopeAnySend, recordingReplayIntoChecked, recordingReplayInto
  case contextEmit, recorderRecording, recorderTravel, recorderIsAwayFromLive, recorderReturnToLive, recorderDrain
  case storeScopeFieldOutputs, contextDispatchUpdater, recorderInterceptor
}
enum FuzzCoverage {
  static func note(_ entry: FuzzEntryPoint) {}
}
